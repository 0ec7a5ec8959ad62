/**
 * `baton cancel` and `baton stop` from a second process stop runs the service launched
 * (PRODUCT.md §12): the CLI writes a cancel request to the shared database and the supervising
 * service process carries it out, killing every process of the run.
 */
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { CLI } from '../support/cli.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

// Two processes share a database only through a server: embedded PGlite is single-process.
describe.runIf(process.env.DATABASE_URL)('baton cancel from a second process (postgres)', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  });
  afterAll(async () => world?.dispose());

  async function startSleepingRun(messageId: number): Promise<string> {
    world.openai.enqueue({ kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 } });
    world.telegram.pushUpdate(world.privateMessage(OWNER, `/codex sleep ${messageId}`, messageId));
    const started = await world.telegram.waitForSent((m) => replyTarget(m) === messageId && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await waitFor(async () => {
      const cmdlines = await Promise.all((await findRunProcesses(runId)).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')));
      return cmdlines.some((c) => c.includes('600'));
    });
    return runId;
  }

  const baton = (args: string[]) => execa(process.execPath, [CLI, ...args], { env: world.env, extendEnv: false, reject: false, stdin: 'ignore', timeout: 60_000 });

  it('cancels a run with baton cancel and the chat gets the cancelled message', async () => {
    const runId = await startSleepingRun(10);
    const result = await baton(['cancel', runId]);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toContain(`[run ${runId}] cancelled · owner_cancel`);
    expect(await findRunProcesses(runId)).toEqual([]);
    const message = await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    expect(message.text).toContain('Nothing will be relaunched.');
    const again = await baton(['cancel', runId]);
    expect(again.exitCode).toBe(1);
    expect(String(again.stdout)).toBe('That coding run has already finished.');
  });

  it('stops every active run with baton stop', async () => {
    const runId = await startSleepingRun(20);
    const result = await baton(['stop']);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toContain('Stopping 1 active run.');
    expect(String(result.stdout)).toContain(`[run ${runId}] cancelled · stop`);
    expect(await findRunProcesses(runId)).toEqual([]);
  });
});

async function waitFor(predicate: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached');
}
