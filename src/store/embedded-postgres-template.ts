/** The template cluster `npm run build` writes beside the built modules, copied by each fresh start. */
import { chmod, cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresBinaries } from './embedded-postgres-binaries.js';
import { INITDB_FLAGS, POSTGRES_TEMPLATE, runInitdb } from './embedded-postgres-init.js';
import { exists, loadExeca } from './embedded-postgres-io.js';
import { ensureInclude } from './embedded-postgres-settings.js';

/**
 * Writes the template cluster (`npm run build`): an initialized data directory. Skipped when one
 * made by the same binaries with the same flags is there. initdb refuses root: as root it runs
 * as `nobody` through runuser(1) when possible, else the template is skipped (first starts then
 * run initdb, about a second).
 */
export async function buildTemplate(): Promise<void> {
  const execa = await loadExeca();
  const binaries = await postgresBinaries();
  if (!binaries) return;
  const version = (await execa(binaries.postgres, ['--version'])).stdout.trim();
  const stamp = JSON.stringify({ version, flags: INITDB_FLAGS });
  const stampPath = `${POSTGRES_TEMPLATE}.stamp`;
  if (
    (await exists(join(POSTGRES_TEMPLATE, 'PG_VERSION'))) &&
    (await readFile(stampPath, 'utf8').catch(() => '')) === stamp
  )
    return;
  await rm(POSTGRES_TEMPLATE, { recursive: true, force: true });
  if (process.getuid?.() === 0) {
    const work = await mkdtemp(join(tmpdir(), 'baton-pg-template-'));
    try {
      await chmod(work, 0o777);
      const made = await execa(
        'runuser',
        ['-u', 'nobody', '--', binaries.initdb, '-D', join(work, 'data'), ...INITDB_FLAGS],
        { reject: false, stdin: 'ignore', all: true },
      );
      if (made.exitCode !== 0) {
        process.stderr.write(
          `embedded PostgreSQL template skipped (initdb refuses root; runuser -u nobody failed: ${String(made.all).trim().split('\n').pop()})\n`,
        );
        return;
      }
      await execa('chown', ['-R', `${process.getuid()}:${process.getgid?.() ?? 0}`, join(work, 'data')]);
      await ensureInclude(join(work, 'data'));
      await cp(join(work, 'data'), POSTGRES_TEMPLATE, { recursive: true });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  } else {
    await runInitdb(binaries, POSTGRES_TEMPLATE);
  }
  // A template is never a running cluster: no lock or pid files travel with it.
  await rm(join(POSTGRES_TEMPLATE, 'postmaster.pid'), { force: true });
  // Readable by every user, so each can copy it; the copy's directory is made 0700.
  await execa('chmod', ['-R', 'a+rX', POSTGRES_TEMPLATE]);
  await writeFile(stampPath, stamp);
}
