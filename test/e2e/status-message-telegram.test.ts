/**
 * One live status message per run (issue #14 item 3), through `baton start` with the real grammY
 * client against the fake Bot API and the real codex CLI against the fake Responses API: the
 * `started` message is edited in place (`editMessageText`) with the elapsed time, the current
 * step and the tokens so far, at most once per `status_edit_seconds` per conversation; a 429 on an
 * edit holds later edits for its `retry_after`; the outcome stays a new message and is never held
 * up by an edit.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FakeOpenAI, FakeTurn } from '../fakes/fake-openai.js';
import type { FakeTelegram, RecordedEdit } from '../fakes/fake-telegram.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

/** The throttle under test: the default, 5 s per conversation. */
const EDIT_INTERVAL_MS = 5_000;

let world: TelegramE2E;
let telegram: FakeTelegram;
let model: FakeOpenAI;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  ({ telegram } = world);
  model = world.openai;
});

afterAll(async () => {
  await world?.dispose();
});

/** Edits of the message `started` (its chat and message id), in order. */
function editsOf(startedIndex: number): RecordedEdit[] {
  const message = telegram.sentMessages[startedIndex]!;
  return telegram.edits.filter((e) => Number(e.chat_id) === message.chat.id && e.message_id === message.message_id);
}

/** `count` shell tool calls that each take about `sleepS` seconds, then a final answer. */
function toolBurst(count: number, sleepS: number, answer: string): FakeTurn[] {
  return [
    ...Array.from(
      { length: count },
      (_, i): FakeTurn => ({
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: `sleep ${sleepS} && echo step${i + 1}` },
        usage: { input_tokens: 100, output_tokens: 10 },
      }),
    ),
    { kind: 'message', text: answer, usage: { input_tokens: 100, output_tokens: 20 } },
  ];
}

describe('Telegram: the started message is the live status of its run', () => {
  it('is edited with the step and elapsed time, throttled under a burst of tool calls; the final edit says how it ended; the outcome is a new message', async () => {
    const toolCalls = 12;
    model.enqueue(...toolBurst(toolCalls, 1, 'Burst done.'));
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex run the burst', 100));

    const started = await telegram.waitForSent(
      (m) => replyTarget(m) === 100 && / started · codex · /.test(m.text),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    const startedIndex = telegram.sent.indexOf(started);
    const completed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    // The outcome is its own message (the owner is notified), replying to the request.
    expect(replyTarget(completed)).toBe(100);
    expect(completed.text).toContain('Burst done.');

    await waitFor(() => editsOf(startedIndex).some((e) => /^completed · /.test(e.text.split('\n')[1] ?? '')), {
      timeoutMs: WAIT_MS,
      what: 'the final edit',
      intervalMs: 100,
    });
    const edits = editsOf(startedIndex);
    // Mid-run edits keep the started line and add the live status: elapsed time and the step.
    const live = edits.slice(0, -1);
    expect(live.length).toBeGreaterThan(0);
    for (const edit of live) {
      expect(edit.text.split('\n')[0]).toBe(started.text);
      expect(edit.text).toMatch(/^running · \d+(ms|s|m \d{2}s)( · |$)/m);
    }
    expect(live.some((e) => /step: running sleep 1 && echo step\d+/.test(e.text))).toBe(true);
    // The final edit says how the run ended.
    const final = edits.at(-1)!;
    expect(final.text.split('\n')[0]).toBe(started.text);
    expect(final.text.split('\n')[1]).toMatch(/^completed · \d+(s|m \d{2}s) · [\d,]+ tokens/);
    console.info(
      `status edits: ${edits.length} for ${toolCalls} tool calls; gaps ${edits
        .slice(1)
        .map((e, i) => e.atMs - edits[i]!.atMs)
        .join(', ')} ms`,
    );
    // Throttled: far fewer edits than tool calls, and never two within the interval.
    expect(edits.length).toBeLessThan(toolCalls);
    for (let i = 1; i < edits.length; i++) {
      expect(edits[i]!.atMs - edits[i - 1]!.atMs).toBeGreaterThanOrEqual(EDIT_INTERVAL_MS);
    }
    // The edits went through grammY as plain text, without link previews.
    expect(final.parse_mode).toBeUndefined();
  });

  it('a claude progress run: the status counts the files its edit tools changed and lists the last steps; no separate progress notice', async () => {
    world.anthropic.enqueue(
      { kind: 'tool_use', name: 'Write', input: { file_path: `${world.repo}/notes.md`, content: 'one\n' } },
      { kind: 'tool_use', name: 'Bash', input: { command: 'sleep 6; cat notes.md', description: 'wait, then read' } },
      { kind: 'message', text: 'Wrote notes.md.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:acceptEdits progress write the notes', 300));
    const started = await telegram.waitForSent(
      (m) => replyTarget(m) === 300 && / started · claude · /.test(m.text),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    const startedIndex = telegram.sent.indexOf(started);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    await waitFor(() => editsOf(startedIndex).some((e) => /^completed · /.test(e.text.split('\n')[1] ?? '')), {
      timeoutMs: WAIT_MS,
      what: 'the final edit',
      intervalMs: 100,
    });
    const edits = editsOf(startedIndex);
    expect(
      edits.some((e) => /^running · .* · step: running sleep 6; cat notes\.md · 1 file changed/m.test(e.text)),
    ).toBe(true);
    const final = edits.at(-1)!.text.split('\n');
    expect(final[1]).toMatch(/^completed · \d+(s|m \d{2}s) · 1 file changed · [\d,]+ tokens/);
    // progress: the last steps and the changed file's name, in the same message.
    expect(final.slice(2)).toEqual([
      'last steps:',
      `- writing ${world.repo}/notes.md`,
      '- running sleep 6; cat notes.md',
      `files: ${world.repo}/notes.md`,
    ]);
    expect(telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] progress`))).toEqual([]);
  });

  it('holds later edits for the retry_after of a 429, without delaying the outcome', async () => {
    // A retry_after far longer than the run: the outcome must arrive while edits are held (so it
    // does not wait for them), and no edit may arrive in that time. That edits resume once the
    // wait is over is shown on a fake clock in test/delivery/live-status.test.ts.
    const retryAfterS = 600;
    telegram.failNext('editMessageText', {
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: `Too Many Requests: retry after ${retryAfterS}`,
        parameters: { retry_after: retryAfterS },
      },
    });
    model.enqueue(...toolBurst(3, 1, 'Rate limited, still done.'));
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex run while rate limited', 200));

    const started = await telegram.waitForSent(
      (m) => replyTarget(m) === 200 && / started · codex · /.test(m.text),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    const startedIndex = telegram.sent.indexOf(started);
    await waitFor(() => telegram.calls.some((c) => c.method === 'editMessageText' && c.status === 429), {
      timeoutMs: WAIT_MS,
      what: 'the refused edit',
      intervalMs: 100,
    });
    const refused = telegram.calls.find((c) => c.method === 'editMessageText' && c.status === 429)!;
    expect(refused.body['message_id']).toBe(telegram.sentMessages[startedIndex]!.message_id);

    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(outcome.text).toContain('Rate limited, still done.');
    // Past two edit intervals after the refusal, where an edit would be due without the hold.
    await waitFor(() => Date.now() >= refused.atMs + 2 * EDIT_INTERVAL_MS, {
      timeoutMs: WAIT_MS,
      what: 'two edit intervals',
      intervalMs: 100,
    });
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 201));
    await telegram.waitForSent((m) => replyTarget(m) === 201, WAIT_MS);
    expect(editsOf(startedIndex)).toEqual([]);
    expect(telegram.calls.filter((c) => c.method === 'editMessageText' && c.atMs > refused.atMs)).toEqual([]);
  });
});
