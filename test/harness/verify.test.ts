/**
 * The verification runner with real processes: commands in order, a failure's exit and output
 * tail, the time limit, the output cap, a stop, a command that cannot start, the environment it
 * gets and the leftovers it kills.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { detectCgroupSupport, type CgroupSupport } from '../../src/harness/run-cgroup.js';
import { runVerification, type VerifyInputs } from '../../src/harness/verify.js';
import { newRunId } from '../../src/core/ids.js';

let dir: string;
let cgroups: CgroupSupport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-verify-'));
  cgroups = await detectCgroupSupport();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function inputs(commands: string[], over: Partial<VerifyInputs> = {}): VerifyInputs {
  const runId = newRunId();
  return {
    runId,
    plan: { commands, timeoutMinutes: 1, source: 'config' },
    cwd: dir,
    env: { PATH: '/usr/bin:/bin', HOME: dir, BATON_RUN_ID: runId },
    cgroups,
    logPath: join(dir, `${runId}.log`),
    maxLogBytes: 1024 * 1024,
    killGraceMs: 500,
    ...over,
  };
}

describe('runVerification', () => {
  it('runs every command in order in the run directory and reports verified', async () => {
    const run = inputs(['echo one > order.txt', 'echo two >> order.txt', 'test "$(cat order.txt)" = "one\ntwo"']);
    const result = await runVerification(run);
    expect(result).toMatchObject({ reason: 'verified', exitCode: 0, ran: 3, command: run.plan.commands[2] });
    expect(await readFile(join(dir, 'order.txt'), 'utf8')).toBe('one\ntwo\n');
    expect((await stat(run.logPath)).mode & 0o777).toBe(0o600);
  });

  it('stops at the first failing command with its exit code and the end of its output', async () => {
    const run = inputs([
      'echo first ok',
      'for i in $(seq 1 40); do echo "line $i"; done; echo "expected 2 got 3" >&2; exit 3',
      'touch never-ran.txt',
    ]);
    const result = await runVerification(run);
    expect(result).toMatchObject({ reason: 'verify_failed', exitCode: 3, ran: 2, command: run.plan.commands[1] });
    const tail = result.tail!.split('\n');
    expect(tail.length).toBeLessThanOrEqual(20);
    expect(tail.at(-1)).toBe('expected 2 got 3');
    expect(tail).toContain('line 40');
    expect(tail).not.toContain('line 1');
    await expect(stat(join(dir, 'never-ran.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    // The whole output is in the log.
    expect(await readFile(run.logPath, 'utf8')).toContain('line 1\n');
  });

  it('gives the commands exactly the environment it is handed', async () => {
    const run = inputs(['env > verify-env.txt']);
    expect((await runVerification(run)).reason).toBe('verified');
    const env = await readFile(join(dir, 'verify-env.txt'), 'utf8');
    expect(env).toContain(`BATON_RUN_ID=${run.runId}`);
    // Nothing of the test process's own environment is inherited.
    for (const name of ['DATABASE_URL', 'VITEST']) expect(env).not.toMatch(new RegExp(`^${name}=`, 'm'));
  });

  it('stops a command at the time limit, with what it left behind', async () => {
    const run = inputs(['(setsid sleep 300 &) ; echo waiting; sleep 300'], {
      plan: { commands: ['(setsid sleep 300 &) ; echo waiting; sleep 300'], timeoutMinutes: 0.02, source: 'message' },
    });
    const result = await runVerification(run);
    expect(result).toMatchObject({
      reason: 'verify_timeout',
      exitCode: null,
      tail: expect.stringContaining('waiting'),
    });
    // The `setsid` sleep left the process group but not the run's cgroup, its tree or its BATON_RUN_ID.
    expect(await findRunProcesses(run.runId)).toEqual([]);
  });

  it('stops a command that prints more than 4 times the log cap, keeping the log at the cap', async () => {
    const run = inputs(['yes flood'], { maxLogBytes: 4096 });
    const result = await runVerification(run);
    expect(result.reason).toBe('verify_output_limit');
    expect((await stat(run.logPath)).size).toBe(4096);
  });

  it('reports a stopped verification as not run, and a command that cannot start with why', async () => {
    const stop = new AbortController();
    const pending = runVerification(inputs(['sleep 300'], { signal: stop.signal }));
    setTimeout(() => stop.abort(), 200);
    expect(await pending).toMatchObject({ reason: 'verify_not_run', why: 'stopped' });

    const gone = await runVerification(inputs(['true'], { cwd: join(dir, 'no-such-dir') }));
    expect(gone).toMatchObject({ reason: 'verify_not_run', ran: 1, why: expect.stringContaining('ENOENT') });
  });
});
