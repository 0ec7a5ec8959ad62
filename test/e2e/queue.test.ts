/**
 * A queue instead of a refusal (issue #17), through `baton start` with the real grammY client
 * against the fake Bot API and the real codex CLI against the fake Responses API: tasks for a busy
 * checkout wait as `queued` with their place in line, start in order, each once, also across a
 * SIGKILL of the service; past `max_queued` a task is refused clearly; /cancel drops a queued run.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { GUEST } from '../support/telegram-e2e.js';
import type { RecordedRequest } from '../fakes/fake-openai.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: 'max_queued = 2',
  });
  // The task named "blocker" runs a long command (it holds the checkout until the service is
  // killed); every other task answers at once.
  world.openai.setFallback((request: RecordedRequest) => {
    const body = JSON.stringify(request.body);
    return body.includes('blocker') && !body.includes('function_call_output')
      ? { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 300' } }
      : { kind: 'message', text: 'done' };
  });
});
afterAll(async () => world?.dispose());

const sentIndex = (predicate: (text: string) => boolean): number =>
  world.telegram.sent.findIndex((m) => predicate(m.text));
const count = (predicate: (text: string) => boolean): number =>
  world.telegram.sent.filter((m) => predicate(m.text)).length;

async function answerTo(text: string, messageId: number, from = OWNER): Promise<string> {
  world.telegram.pushUpdate(world.privateMessage(from, text, messageId));
  return (await world.telegram.waitForSent((m) => replyTarget(m) === messageId, WAIT_MS)).text;
}

describe('queue', () => {
  it('queues tasks for a busy checkout with their place, refuses past max_queued, and runs them in order, each once, across a SIGKILL of the service', async () => {
    const { telegram, openai, repo } = world;
    const blocker = runIdOf(await answerTo('/codex blocker task', 30));
    await openai.waitForRequest((r) => JSON.stringify(r.body).includes('blocker'), WAIT_MS);

    const second = await answerTo('/codex second task', 31);
    const secondId = runIdOf(second);
    expect(second).toBe(
      `[run ${secondId}] queued behind ${blocker}, 1 ahead · codex · ${repo}\nIt starts by itself when its turn comes; /cancel to drop it.`,
    );
    const third = await answerTo('/codex third task', 32);
    const thirdId = runIdOf(third);
    expect(third.split('\n')[0]).toBe(`[run ${thirdId}] queued behind ${secondId}, 2 ahead · codex · ${repo}`);
    expect(await answerTo('/codex fourth task', 33)).toBe(
      '2 runs are already queued in this conversation (max_queued = 2). Wait for one to start, /cancel one, or raise [harness] max_queued and restart.',
    );
    expect(await answerTo(`/runs ${thirdId}`, 34)).toMatch(new RegExp(`^\\[run ${thirdId}\\] queued\\n`));

    await world.crashAndRestart();

    await telegram.waitForSent((m) => m.text.startsWith(`[run ${blocker}] interrupted`), WAIT_MS);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${thirdId}] completed`), WAIT_MS);
    const secondStarted = sentIndex((t) => t.startsWith(`[run ${secondId}] started`));
    const secondDone = sentIndex((t) => t.startsWith(`[run ${secondId}] completed`));
    const thirdStarted = sentIndex((t) => t.startsWith(`[run ${thirdId}] started`));
    expect(secondStarted, telegram.sent.map((m) => m.text.split('\n')[0]).join('\n')).toBeGreaterThan(-1);
    expect(secondDone, telegram.sent.map((m) => m.text.split('\n')[0]).join('\n')).toBeGreaterThan(secondStarted);
    expect(thirdStarted).toBeGreaterThan(secondDone);
    for (const id of [secondId, thirdId]) {
      expect(count((t) => t.startsWith(`[run ${id}] started`))).toBe(1);
      expect(count((t) => t.startsWith(`[run ${id}] completed`))).toBe(1);
      // One CLI process each: one codex thread (app-server's thread/started) in its event spool.
      expect((await world.eventsOf(id)).filter((e) => e['method'] === 'thread/started')).toHaveLength(1);
    }
    // The refused fourth task never ran.
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('fourth task'))).toBe(false);
  });

  it('/cancel drops a queued run before it starts; a guest cannot', async () => {
    const { openai } = world;
    const blocker = runIdOf(await answerTo('/codex blocker again', 40));
    await openai.waitForRequest((r) => JSON.stringify(r.body).includes('blocker again'), WAIT_MS);
    const queuedId = runIdOf(await answerTo('/codex never runs', 41));
    expect(await answerTo(`/cancel ${queuedId}`, 42, GUEST)).toMatch(/owner only/);
    expect(await answerTo(`/cancel ${queuedId}`, 43)).toBe(
      `[run ${queuedId}] cancelled (it was queued and never started).`,
    );
    await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${queuedId}] cancelled · codex · `), WAIT_MS);
    expect(await answerTo(`/cancel ${blocker}`, 44)).toBe(`[run ${blocker}] cancelled.`);
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('never runs'))).toBe(false);
    expect(count((t) => t.startsWith(`[run ${queuedId}] started`))).toBe(0);
  });
});
