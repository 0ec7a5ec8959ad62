/**
 * A message to a running run that is still in flight when the service is killed (kill -9): the
 * real codex CLI as `codex exec` (which takes no message while it runs; app-server's turn/steer
 * is tested in telegram-converse) against the fake Responses API, through
 * `baton start` on the fake Bot API. The message's inbound event stays claimed until its resumed
 * run is recorded, so the restarted service handles it again: it becomes a resumed run then.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: 'codex_transport = "exec"',
  });
});
afterAll(async () => world?.dispose());

describe('a steer message in flight across a crash', () => {
  it('is not lost: after kill -9 and a restart it starts a resumed run of the interrupted run', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 300' } });
    openai.setFallback(() => ({ kind: 'message', text: 'Picked up the note.' }));
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex wait for the build', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await waitFor(
      async () =>
        (await world.eventsOf(runId).catch(() => [])).some(
          (e) => e.type === 'item.started' && JSON.stringify(e).includes('sleep 300'),
        ),
      { timeoutMs: WAIT_MS, what: 'codex to run its sleep' },
    );

    telegram.pushUpdate(world.privateMessage(OWNER, 'also note the build time', 11));
    const deferred = await telegram.waitForSent((m) => replyTarget(m) === 11, WAIT_MS);
    expect(deferred.text).toBe(
      `[run ${runId}] takes no message while it runs: your message starts a resumed run once it has ended.`,
    );
    await world.crashAndRestart();

    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] interrupted`), 3 * WAIT_MS);
    const resumed = await telegram.waitForSent(
      (m) => replyTarget(m) === 11 && m.text.includes('] started'),
      3 * WAIT_MS,
    );
    expect(resumed.text).toMatch(new RegExp(` · resuming ${runId}$`));
    const childId = runIdOf(resumed.text);
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${childId}] completed`), WAIT_MS);
    expect(done.text).toContain('Picked up the note.');
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('also note the build time'))).toBe(true);
    // Once: the message started one run.
    expect(telegram.sent.filter((m) => replyTarget(m) === 11 && m.text.includes('] started'))).toHaveLength(1);
  }, 600_000);
});
