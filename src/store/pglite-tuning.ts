/**
 * Settings of the embedded PGlite engine, tuned for baton's small database on a machine that
 * also runs coding agents. PGlite is PostgreSQL compiled to WebAssembly in this process; its
 * defaults size buffers for a general server (shared_buffers 128 MB and more), all of which the
 * WebAssembly memory keeps once touched, and its first start runs initdb in WebAssembly too
 * (seconds of CPU, ~600 MB that stay with the process).
 *
 * Two measures, measured in README "Embedded database":
 * - {@link PGLITE_POSTGRESQL_CONF}: small buffers.
 * - A template data directory made once at build time (`npm run build` runs this module): a
 *   fresh `$BATON_HOME/pgdata` is unpacked from it, in a child process, instead of running
 *   initdb in the service.
 *
 * Source of the options: `postgresqlconf`, `loadDataDir` and `dumpDataDir()` of
 * `PGliteOptions` / `PGlite` in @electric-sql/pglite 0.5; the conf keys are PostgreSQL's own.
 */
import { execFile } from 'node:child_process';
import { readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** postgresql.conf lines for the embedded engine. */
export const PGLITE_POSTGRESQL_CONF: readonly string[] = [
  'shared_buffers=8MB',
  'wal_buffers=256kB',
  'work_mem=1MB',
  'maintenance_work_mem=8MB',
  'temp_buffers=1MB',
];

/** The template beside this module (`dist/store/` once built); absent when running from `src/`. */
export const PGLITE_TEMPLATE = fileURLToPath(new URL('./pglite-template.tar.gz', import.meta.url));

/** PGlite options: the tuned conf. */
export function pgliteOptions(): { postgresqlconf: string[] } {
  return { postgresqlconf: [...PGLITE_POSTGRESQL_CONF] };
}

/**
 * Before the first open of `dataDir` (no `PG_VERSION` yet): unpacks the built template into it
 * in a short-lived child process, whose WebAssembly memory (~250 MB for the unpack) goes away
 * with it. Without a template (running from `src/`) PGlite runs initdb itself at open.
 *
 * @throws Error when the child fails; the caller reports it as `database_unavailable`.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  const initialized = await stat(join(dataDir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
  if (initialized) return;
  const hasTemplate = await stat(PGLITE_TEMPLATE).then(
    () => true,
    () => false,
  );
  if (!hasTemplate) return;
  await execFileAsync(process.execPath, [fileURLToPath(import.meta.url), '--unpack', dataDir], { timeout: 0 });
}

async function unpack(dataDir: string): Promise<void> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite(dataDir, { ...pgliteOptions(), loadDataDir: new Blob([await readFile(PGLITE_TEMPLATE)]) });
  await db.waitReady;
  await db.close();
}

/**
 * Writes the template: an empty, initialized data directory dumped as a gzipped tar. Skipped
 * when one made by the same PGlite version with the same conf is there (a stamp file says so).
 */
async function buildTemplate(): Promise<void> {
  // The version pinned in baton's package.json (PGlite's own package.json is not exported).
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const stamp = JSON.stringify({ pglite: pkg.dependencies['@electric-sql/pglite'], conf: PGLITE_POSTGRESQL_CONF });
  const stampPath = `${PGLITE_TEMPLATE}.stamp`;
  const existing = await stat(PGLITE_TEMPLATE).then(
    () => true,
    () => false,
  );
  if (existing && (await readFile(stampPath, 'utf8').catch(() => '')) === stamp) return;
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite(pgliteOptions());
  await db.waitReady;
  const dump = await db.dumpDataDir('gzip');
  await db.close();
  const temp = `${PGLITE_TEMPLATE}.tmp-${process.pid}`;
  await writeFile(temp, Buffer.from(await dump.arrayBuffer()));
  await rename(temp, PGLITE_TEMPLATE);
  await writeFile(stampPath, stamp);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === '--build-template') await buildTemplate();
  else if (process.argv[2] === '--unpack' && process.argv[3]) await unpack(process.argv[3]);
}
