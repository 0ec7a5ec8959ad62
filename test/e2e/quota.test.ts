/**
 * A plan's usage limit end to end: the real codex and claude CLIs get the answer their APIs give
 * at a limit (429 with its body and headers, test/fakes/limit-responses.ts) from the fake model
 * servers, the run ends `quota_exhausted` with the reset, the next run of that vendor waits
 * queued for the reset, Run on … starts the task on the other CLI, and Run at reset queues it
 * durably: a crash and restart of the service later, it starts once the reset has passed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall } from '../fakes/fake-anthropic.js';
import type { SendMessageBody } from '../fakes/fake-telegram.js';
import { anthropicUsageLimit, anthropicWindowHeaders, codexUsageLimit } from '../fakes/limit-responses.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    claudeAuth: 'subscription',
  });
});
afterAll(async () => world?.dispose());

/** `2026-12-04 03:02 UTC`, as the wording writes a reset. */
const utcMinute = (at: Date): string => `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** Sends `text` as the owner; resolves with the first answer to it. */
async function answerTo(text: string, messageId: number): Promise<SendMessageBody> {
  world.telegram.pushUpdate(world.privateMessage(OWNER, text, messageId));
  return world.telegram.waitForSent((m) => replyTarget(m) === messageId, WAIT_MS);
}

/** The outcome of run `runId` (its first message that is not its `started`). */
async function outcomeOf(runId: string): Promise<SendMessageBody> {
  return world.telegram.waitForSent(
    (m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started') && !m.text.includes('] queued'),
    WAIT_MS,
  );
}

/** The buttons under a sent message: label → callback_data. */
function buttonsOf(body: SendMessageBody): Record<string, string> {
  const rows =
    (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
      ?.inline_keyboard ?? [];
  return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
}

/** Presses `label` under `body` as the owner; resolves with the answer the presser saw. */
async function press(body: SendMessageBody, label: string): Promise<string | undefined> {
  const callbackData = buttonsOf(body)[label];
  if (!callbackData) throw new Error(`no button ${label} under: ${body.text}`);
  const message = world.telegram.sentMessages[world.telegram.sent.indexOf(body)]!;
  const queryId = `cbq-${world.telegram.pressButton({ from: { id: OWNER }, message, callbackData })}-${OWNER}`;
  const deadline = Date.now() + WAIT_MS;
  while (!world.telegram.callbackAnswers.has(queryId)) {
    if (Date.now() > deadline) throw new Error(`the press ${queryId} was never answered`);
    await sleep(50);
  }
  return world.telegram.callbackAnswers.get(queryId)!.text;
}

describe('plan usage limits', () => {
  it('codex at its limit: quota_exhausted with the reset, the next codex run waits for it, Run on claude runs the task now', async () => {
    const { openai, anthropic, telegram } = world;
    // Two hours on, in whole minutes: codex prints the reset to the minute.
    const reset = new Date(Math.ceil((Date.now() + 2 * 3600_000) / 60_000) * 60_000);
    openai.enqueue(codexUsageLimit({ resetAtSeconds: reset.getTime() / 1000 }));
    const started = await answerTo('/codex fix the flaky test', 10);
    const runId = runIdOf(started.text);
    const outcome = await outcomeOf(runId);
    expect(outcome.text).toContain('You’ve hit your usage limit.');
    expect(outcome.text).toContain('Reason: quota_exhausted');
    // codex wrote the reset to the minute; baton rounds up one minute so a queued run never starts early.
    const storedReset = new Date(reset.getTime() + 60_000);
    expect(outcome.text).toContain(`The plan's usage limit resets at ${utcMinute(storedReset)}.`);
    expect(Object.keys(buttonsOf(outcome))).toEqual(['Run at reset', 'Run on claude']);

    // A new codex run waits for the reset instead of failing the same way; nothing reaches the model.
    const requestsBefore = openai.requests.length;
    const queued = await answerTo('/codex another task', 11);
    expect(queued.text).toMatch(
      new RegExp(`^\\[run hr_[0-9a-f]{12}\\] queued until codex's plan resets at ${utcMinute(storedReset)} · `),
    );
    const queuedId = runIdOf(queued.text);
    expect((await answerTo('/runs', 12)).text).toContain(
      `${queuedId} · queued until the plan resets at ${utcMinute(storedReset)} · codex`,
    );
    expect((await answerTo('/doctor', 14)).text).toContain(
      `at its plan's usage limit until ${utcMinute(storedReset)}: new codex runs wait queued until then`,
    );
    expect((await answerTo(`/cancel ${queuedId}`, 13)).text).toBeDefined();
    expect(openai.requests.length).toBe(requestsBefore);

    // Run on claude: the same task, now, on the other CLI.
    const claudeCalls = anthropic.requests.filter(isMessagesCall).length;
    anthropic.enqueue({ kind: 'message', text: 'Fixed it on claude.' });
    const answer = await press(outcome, 'Run on claude');
    expect(answer).toMatch(/^\[run hr_[0-9a-f]{12}\] started on claude\.$/);
    const claudeRun = runIdOf(answer!);
    expect(telegram.sent.some((m) => m.text.startsWith(`[run ${claudeRun}] started · claude`))).toBe(true);
    expect((await outcomeOf(claudeRun)).text).toMatch(new RegExp(`^\\[run ${claudeRun}\\] completed · claude`));
    const call = anthropic.requests.filter(isMessagesCall)[claudeCalls];
    expect(JSON.stringify(call?.body)).toContain('fix the flaky test');
  });

  it('claude at its limit: Run at reset queues the task, which survives a crash and restart and starts after the reset', async () => {
    const { anthropic, telegram } = world;
    // claude reports the reset to the second: near enough for the test to pass it.
    const reset = new Date(Math.ceil(Date.now() / 1000) * 1000 + 30_000);
    anthropic.enqueue(anthropicUsageLimit(reset.getTime() / 1000));
    const started = await answerTo('/claude mode:acceptEdits write the notes', 20);
    const runId = runIdOf(started.text);
    const outcome = await outcomeOf(runId);
    expect(outcome.text).toContain("You've hit your 5-hour limit");
    expect(outcome.text).toContain('Reason: quota_exhausted');
    expect(outcome.text).toContain(`The plan's usage limit resets at ${utcMinute(reset)}.`);
    expect(Object.keys(buttonsOf(outcome))).toEqual(['Run at reset', 'Run on codex']);

    const answer = await press(outcome, 'Run at reset');
    expect(answer).toMatch(/^\[run hr_[0-9a-f]{12}\] queued for the reset\.$/);
    const waiting = runIdOf(answer!);
    const queued = await telegram.waitForSent((m) => m.text.startsWith(`[run ${waiting}] queued until`), WAIT_MS);
    expect(queued.text).toContain(`queued until claude's plan resets at ${utcMinute(reset)} · `);
    const callsWhileWaiting = anthropic.requests.filter(isMessagesCall).length;
    const requestsWhileWaiting = anthropic.requests.length;

    // The service dies before the reset; the queued run is a row in the database, not a timer in
    // its memory, and the new process starts it once the reset has passed, not before.
    anthropic.enqueue({ kind: 'message', text: 'Notes written after the reset.' });
    await world.crashAndRestart();
    expect(Date.now()).toBeLessThan(reset.getTime());
    expect(anthropic.requests.filter(isMessagesCall).length).toBe(callsWhileWaiting);
    await anthropic.waitForRequest(
      (r) =>
        anthropic.requests.indexOf(r) >= requestsWhileWaiting &&
        isMessagesCall(r) &&
        JSON.stringify(r.body).includes('write the notes'),
      reset.getTime() - Date.now() + WAIT_MS,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(reset.getTime());
    const done = await outcomeOf(waiting);
    expect(done.text).toMatch(new RegExp(`^\\[run ${waiting}\\] completed · claude`));
    expect(done.text).toContain('Notes written after the reset.');
  });

  it('warns once per window period when a window claude reports passes quota_warn_percent', async () => {
    const { anthropic, telegram } = world;
    const fiveHourReset = Math.floor(Date.now() / 1000) + 4 * 3600;
    const headers = anthropicWindowHeaders(
      { usedPercent: 85, resetAtSeconds: fiveHourReset },
      { usedPercent: 42, resetAtSeconds: fiveHourReset + 3 * 86_400 },
    );
    const warning = `claude: 85% of the plan's 5-hour window is used; it resets at ${utcMinute(new Date(fiveHourReset * 1000))}.`;
    const runs: string[] = [];
    for (const messageId of [30, 31]) {
      anthropic.enqueue({ kind: 'message', text: `answer ${messageId}`, headers });
      const runId = runIdOf((await answerTo('/claude mode:acceptEdits look around', messageId)).text);
      expect((await outcomeOf(runId)).text).toMatch(new RegExp(`^\\[run ${runId}\\] completed`));
      runs.push(runId);
    }
    // The warning follows the first run's outcome; the second run, same period, adds none.
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runs[0]}] ${warning}`), WAIT_MS);
    const last = await answerTo('/runs', 32);
    expect(last.text).toContain(runs[1]);
    expect(telegram.sent.filter((m) => m.text.includes(warning)).map((m) => runIdOf(m.text))).toEqual([runs[0]]);
  });
});
