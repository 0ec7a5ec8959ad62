/**
 * A crash of the service (SIGKILL) while a real codex run is active and its tool is running:
 * at restart the run becomes interrupted, its leftover processes are killed, and the chat gets
 * the outcome with the resume command (PRODUCT.md §10). Nothing is relaunched.
 */
import { readdir, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
});
afterAll(async () => world?.dispose());

describe('crash and restart', () => {
  it('interrupts the orphaned run, kills its processes, and tells the chat how to resume', async () => {
    const { telegram, openai } = world;
    // The tool also starts a process that drops its session and BATON_RUN_ID; it must not
    // outlive the restart either.
    const escapee = 'sleep\u0000600.7319\u0000';
    openai.enqueue({
      kind: 'tool_call',
      name: 'exec_command',
      arguments: { cmd: 'setsid env -i sleep 600.7319 & sleep 600', yield_time_ms: 30_000 },
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex wait a long time', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    // The tool shell is running once the model was asked and a process of the run sleeps.
    await openai.waitForRequest((r) => r.path === '/v1/responses', WAIT_MS);
    await waitFor(
      async () => {
        const cmdlines = await Promise.all(
          (await findRunProcesses(runId)).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
        );
        return cmdlines.some((c) => c.includes('sleep\u0000600') || c.includes('sleep 600'));
      },
      { what: "the run's sleep 600 tool", intervalMs: 50 },
    );
    await waitFor(async () => (await processesWithCmdline(escapee)).length > 0, {
      what: 'the escaped process',
      intervalMs: 50,
    });

    await world.crashAndRestart();
    expect(world.service.stdout()).toContain('baton ready');

    const interrupted = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] interrupted`), WAIT_MS);
    expect(interrupted.text).toContain('Reason: restart');
    expect(interrupted.text).toMatch(/Resume: cd \S+ && codex exec resume [0-9a-f-]+ --json/);
    expect(interrupted.text).toContain('git status');
    expect(replyTarget(interrupted)).toBe(10);
    expect(await findRunProcesses(runId)).toEqual([]);
    expect(await processesWithCmdline(escapee)).toEqual([]);

    // The worktree is free again: a new run starts and completes.
    openai.enqueue({ kind: 'message', text: 'After the crash.' });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex are you back', 11));
    const again = await telegram.waitForSent((m) => replyTarget(m) === 11 && m.text.includes('] started'), WAIT_MS);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(again.text)}] completed`), WAIT_MS);
    // Nothing was relaunched: exactly one started message for the crashed request.
    expect(telegram.sent.filter((m) => replyTarget(m) === 10 && m.text.includes('] started'))).toHaveLength(1);
  });
});

/** Live (non-zombie) pids whose whole command line is `cmdline` (NUL-separated, as in /proc). */
async function processesWithCmdline(cmdline: string): Promise<number[]> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const found: number[] = [];
  for (const pid of pids) {
    const [cmd, stat] = await Promise.all([
      readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => ''),
      readFile(`/proc/${pid}/stat`, 'utf8').catch(() => ''),
    ]);
    if (cmd === cmdline && !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) found.push(Number(pid));
  }
  return found;
}
