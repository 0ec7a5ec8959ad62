/**
 * The checked-in codex app-server protocol types (src/harness/vendors/codex-app-server/protocol/)
 * are what the codex under test generates (`codex app-server generate-ts`, kept to the types
 * baton reads by scripts/codex-protocol.mjs). Under `npm run test:vendors` with a newer codex this
 * is the drift check: it fails until the types are regenerated and the vendor module still builds.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';

it('matches what the codex under test generates', async () => {
  const codex = join(inject('codexBinDir'), 'codex');
  const run = await promisify(execFile)(process.execPath, ['scripts/codex-protocol.mjs', codex, '--check'], {
    cwd: join(import.meta.dirname, '..', '..'),
  }).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
  );
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
});
