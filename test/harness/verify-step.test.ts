/**
 * The verify step inside the supervisor, with the fake codex and real processes on a real
 * database: a stop during the verification stops its command and the run ends completed, not
 * verified; a run whose plan names nothing runnable says why.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

let h: TestHarness;
let n = 0;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.dispose();
});

async function launch(options: string, prompt: string): Promise<RunId> {
  const cwd = join(h.root, `verify${++n}`);
  await mkdir(cwd, { recursive: true });
  const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} ${options} ${prompt}`));
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return result.runId;
}

describe('the verify step', () => {
  it('stops the verification on /cancel: the run ends completed and not verified, nothing left running', async () => {
    const runId = await launch('verify:"touch verifying; sleep 300"', 'success');
    const cwd = (await h.store.runs.getRun(runId))!.cwd;
    // The agent completed and the verification runs (its marker is there): the run is still
    // active, holding its lock.
    await waitFor(() => existsSync(join(cwd, 'verifying')), { what: 'the verification command', timeoutMs: 30_000 });
    expect((await h.store.runs.getRun(runId))?.status).toBe('running');
    await h.dispatcher.handle(inbound('1', `/cancel ${runId}`));
    await h.supervisor.idle();
    const run = (await h.store.runs.getRun(runId))!;
    expect(run).toMatchObject({ status: 'completed', verifyReason: 'verify_not_run' });
    expect(run.verification).toMatchObject({ why: 'stopped', command: 'touch verifying; sleep 300' });
    expect(await findRunProcesses(runId)).toEqual([]);
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed · not verified`));
    expect(outcome.text).toContain('the run was stopped while');
    // Nothing to fix in a verification that was stopped.
    expect(outcome.buttons ?? []).toEqual([]);
  });

  it('stores a passed verification with its facts and plan, with no button under its outcome', async () => {
    const runId = await launch('verify:true verify:"exit 0"', 'success');
    await h.supervisor.idle();
    const run = (await h.store.runs.getRun(runId))!;
    expect(run.verifyReason).toBe('verified');
    expect(run.verification).toMatchObject({ reason: 'verified', ran: 2, exitCode: 0, command: 'exit 0' });
    expect(run.options.verify).toEqual({ commands: ['true', 'exit 0'], timeoutMinutes: 15, source: 'message' });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed · verified`));
    expect(outcome.buttons ?? []).toEqual([]);
  });
});
