/**
 * Attack: the CLI is spawned with node:child_process (src/harness/supervisor.ts, issue #15), and
 * a binary that cannot run ends in 'error' without a pid. Beyond the missing binary
 * (test/harness/supervisor.test.ts), each way exec fails after the path exists — a directory,
 * a file without the execute bit (EACCES), a script whose interpreter is missing (ENOENT), a
 * file with the execute bit that is no program (exit 126/127 from the shell fallback, or
 * ENOEXEC) — must end the run as failed, not hang it nor crash on an unhandled error.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, inbound } from '../support/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'baton-attack-unrunnable-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function binaries(): Array<[string, string, string | undefined]> {
  const directory = join(dir, 'a-directory');
  mkdirSync(directory);
  const noExec = join(dir, 'no-exec');
  writeFileSync(noExec, '#!/bin/sh\nexit 0\n');
  chmodSync(noExec, 0o644);
  const badInterp = join(dir, 'bad-interpreter');
  writeFileSync(badInterp, '#!/nonexistent/interpreter\n');
  chmodSync(badInterp, 0o755);
  const garbage = join(dir, 'garbage');
  writeFileSync(garbage, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2, 3, 4]));
  chmodSync(garbage, 0o755);
  return [
    ['directory', directory, 'spawn_failed'],
    ['no execute bit', noExec, 'spawn_failed'],
    ['missing interpreter', badInterp, 'spawn_failed'],
    ['no program', garbage, undefined],
  ];
}

describe('a CLI binary that cannot run', () => {
  it.each(binaries())('%s: the run fails, nothing hangs', async (_name, binary, reason) => {
    const broken = await createHarness({ codexBinary: binary });
    try {
      const cwd = join(broken.root, 'r');
      mkdirSync(cwd);
      const result = await broken.dispatcher.handle(inbound('1', `/codex in:${cwd} success`));
      if (result.kind !== 'launched') throw new Error('not launched');
      await broken.supervisor.idle();
      const run = await broken.store.runs.getRun(result.runId);
      expect(run?.status).toBe('failed');
      if (reason) expect(run?.reason).toBe(reason);
      await broken.channel.waitForText(/failed/);
    } finally {
      await broken.dispose();
    }
  });
});
