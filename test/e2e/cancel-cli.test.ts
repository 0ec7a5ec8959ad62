/**
 * `baton cancel` and `baton stop` from a second process stop runs the service launched
 * (PRODUCT.md §12): the CLI writes a cancel request to the shared database and the supervising
 * service process carries it out, killing every process of the run.
 */
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { CLI } from '../support/cli.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

// With PostgreSQL the CLI writes a cancel request to the shared database; with embedded PGlite
// (single-process) it sends the command to the running service's admin endpoint.
describe(`baton cancel from a second process (${process.env.DATABASE_URL ? 'postgres' : 'pglite'})`, () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  });
  afterAll(async () => world?.dispose());

  async function startSleepingRun(messageId: number): Promise<string> {
    world.openai.enqueue({
      kind: 'tool_call',
      name: 'exec_command',
      arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 },
    });
    world.telegram.pushUpdate(world.privateMessage(OWNER, `/codex sleep ${messageId}`, messageId));
    const started = await world.telegram.waitForSent(
      (m) => replyTarget(m) === messageId && m.text.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    await waitFor(
      async () => {
        const cmdlines = await Promise.all(
          (await findRunProcesses(runId)).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
        );
        return cmdlines.some((c) => c.includes('600'));
      },
      { what: "the run's sleep 600 tool", intervalMs: 50 },
    );
    return runId;
  }

  const baton = (args: string[]) =>
    execa(process.execPath, [CLI, ...args], {
      env: world.env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });

  it('cancels a run with baton cancel and the chat gets the cancelled message', async () => {
    const runId = await startSleepingRun(10);
    const result = await baton(['cancel', runId]);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toMatch(new RegExp(`\\[run ${runId}\\] cancelled`));
    expect(await findRunProcesses(runId)).toEqual([]);
    const message = await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    expect(message.text).toContain('Nothing will be relaunched.');
    const again = await baton(['cancel', runId]);
    expect(again.exitCode).toBe(1);
    expect(String(again.stdout)).toBe('That coding run has already finished.');
  });

  it('refuses admin commands without the token from service.json', async () => {
    const { port } = JSON.parse(await readFile(join(world.batonHome, 'service.json'), 'utf8')) as { port: number };
    const post = (auth: string) =>
      fetch(`http://127.0.0.1:${port}/admin/command`, {
        method: 'POST',
        headers: { authorization: auth },
        body: JSON.stringify({ text: '/stop' }),
      });
    expect((await post('Bearer wrong')).status).toBe(401);
    expect((await post('')).status).toBe(401);
  });

  it('stops every active run with baton stop', async () => {
    const runId = await startSleepingRun(20);
    const result = await baton(['stop']);
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toMatch(/Stop(ped|ping) 1 active run\./);
    await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    expect(await findRunProcesses(runId)).toEqual([]);
  });
});
