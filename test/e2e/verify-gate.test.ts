/**
 * The verification gate end to end: `baton start` with the real grammY client against the fake
 * Bot API, the real codex CLI against the fake Responses API, in a real git repository whose
 * `[projects.app]` table names the verify commands. A completed run is verified; a failed
 * verification carries a Fix button that only the owner may press, and the fix run resumes the
 * session with the failure as its task and is verified again; a run whose agent did not complete
 * is never verified; a verification past its time limit is stopped and says so.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER_ONLY_BUTTONS } from '../../src/wording/presses.js';
import { inputItemsOf, type FakeOpenAI } from '../fakes/fake-openai.js';
import type { FakeTelegram, SendMessageBody } from '../fakes/fake-telegram.js';
import {
  CANARY,
  GUEST,
  OWNER,
  TOKEN,
  WAIT_MS,
  replyTarget,
  runIdOf,
  startTelegramE2E,
  type TelegramE2E,
} from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

let world: TelegramE2E;
let telegram: FakeTelegram;
let model: FakeOpenAI;
let repo: string;
let messageId = 100;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    // The project's own commands: the first checks the agent's file, the second records the
    // environment the verification ran with.
    extraToml: (dir) =>
      [
        '[projects.app]',
        `path = ${JSON.stringify(dir)}`,
        'verify = ["test -f hello.txt", "env > verify-env.txt"]',
        'verify_timeout_minutes = 1',
      ].join('\n'),
  });
  ({ telegram, repo } = world);
  model = world.openai;
});

afterAll(async () => {
  await world?.dispose();
});

/** Sends `text` as the owner; @returns the message id it used. */
function send(text: string, from = OWNER): number {
  const id = ++messageId;
  telegram.pushUpdate(world.privateMessage(from, text, id));
  return id;
}

async function outcomeOf(runId: string): Promise<SendMessageBody> {
  return telegram.waitForSent(
    (m) => m.text.startsWith(`[run ${runId}] `) && / · codex · /.test(m.text) && !m.text.includes('] started'),
    WAIT_MS,
  );
}

function buttonsOf(body: SendMessageBody): Record<string, string> {
  const rows =
    (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
      ?.inline_keyboard ?? [];
  return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
}

/** Presses `label` under `body` as `userId`; resolves with the answer the presser saw. */
async function press(body: SendMessageBody, label: string, userId: number): Promise<string> {
  const message: Message = telegram.sentMessages[telegram.sent.indexOf(body)]!;
  const id = telegram.pressButton({ from: { id: userId }, message, callbackData: buttonsOf(body)[label]! });
  const query = `cbq-${id}-${userId}`;
  await waitFor(() => telegram.callbackAnswers.has(query), { what: `the answer to ${label}`, timeoutMs: WAIT_MS });
  return String(telegram.callbackAnswers.get(query)!.text);
}

async function details(runId: string): Promise<string> {
  const id = send(`/runs ${runId}`);
  return (await telegram.waitForSent((m) => replyTarget(m) === id, WAIT_MS)).text;
}

describe('the verification gate', () => {
  it('verifies a completed run with the project’s commands, in its environment and no secret', async () => {
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'printf hello > hello.txt' } },
      { kind: 'message', text: 'Created hello.txt.' },
    );
    const id = send('/codex create hello.txt');
    const started = await telegram.waitForSent((m) => replyTarget(m) === id && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const outcome = await outcomeOf(runId);
    expect(outcome.text).toMatch(new RegExp(`^\\[run ${runId}\\] completed · verified · codex · ${repo} · `));
    expect(outcome.text).toContain('Verified: 2 commands, the last env > verify-env.txt passed');
    expect(outcome.text).toContain('Created hello.txt.');
    expect(buttonsOf(outcome)).not.toHaveProperty('Fix');
    // The patch is the agent's change: the verification's own file is not in it.
    expect(outcome.text).toContain('hello.txt');
    expect(outcome.text).not.toMatch(/verify-env\.txt \|/);

    const env = await readFile(join(repo, 'verify-env.txt'), 'utf8');
    expect(env).toContain(`BATON_RUN_ID=${runId}`);
    expect(env).not.toContain(CANARY);
    expect(env).not.toContain(TOKEN);
    expect(env).not.toMatch(/^(TELEGRAM_|DATABASE_URL=)/m);

    expect(await details(runId)).toMatch(
      /verify: test -f hello\.txt; env > verify-env\.txt \(config, 1 min\) → verified/,
    );
  });

  it('fails the verification with the exit and output, refuses a guest’s Fix, and the owner’s Fix fixes it', async () => {
    const check = 'test -f fixed.txt || { echo fixed.txt is missing >&2; exit 4; }';
    model.enqueue({ kind: 'message', text: 'I think it is fine.' });
    const id = send(`/codex verify:"${check}" make the fix`);
    const started = await telegram.waitForSent((m) => replyTarget(m) === id && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const outcome = await outcomeOf(runId);
    expect(outcome.text).toMatch(
      new RegExp(`^\\[run ${runId}\\] completed · verification failed \\(exit 4\\) · codex · `),
    );
    expect(outcome.text).toContain('fixed.txt is missing');
    expect(Object.keys(buttonsOf(outcome))).toEqual(['Fix']);
    expect(await details(runId)).toContain('(message, 1 min) → verify_failed');

    // A guest may not press it: nothing is launched.
    const requestsBefore = model.requests.length;
    expect(await press(outcome, 'Fix', GUEST)).toBe(OWNER_ONLY_BUTTONS);

    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch fixed.txt' } },
      { kind: 'message', text: 'Added fixed.txt.' },
    );
    // A double tap: one press acts, the other is told it was already pressed.
    const answers = await Promise.all([press(outcome, 'Fix', OWNER), press(outcome, 'Fix', OWNER)]);
    const answer = answers.find((a) => a.startsWith('Fixing as'))!;
    expect(answer).toMatch(/^Fixing as hr_[0-9a-f]{12}\.$/);
    expect(answers.find((a) => a !== answer)).toMatch(/^Already pressed/);
    const fixId = /hr_[0-9a-f]{12}/.exec(answer)![0];
    // The guest's press sent the model nothing; the fix is the next request.
    const newRequests = () => model.requests.slice(requestsBefore).filter((r) => r.path === '/v1/responses');
    await waitFor(() => newRequests().length > 0, { what: 'the fix run’s request', timeoutMs: WAIT_MS });
    const fixRequest = newRequests()[0]!;
    const prompt = JSON.stringify(inputItemsOf(fixRequest));
    expect(prompt).toContain('fixed.txt is missing');
    expect(prompt).toContain('exited with code 4');
    // The session is resumed: the earlier task is in the conversation.
    expect(prompt).toContain('make the fix');
    const fixed = await outcomeOf(fixId);
    expect(fixed.text).toMatch(new RegExp(`^\\[run ${fixId}\\] completed · verified · codex · `));
    expect(existsSync(join(repo, 'fixed.txt'))).toBe(true);
    // One run resumed the failed one: the owner's first press.
    const resumed = telegram.sent.filter((m) => m.text.includes('] started') && m.text.includes(`resuming ${runId}`));
    expect(resumed.map((m) => runIdOf(m.text))).toEqual([fixId]);
  });

  it('never verifies a run whose agent did not complete', async () => {
    model.enqueue({ kind: 'http_error', status: 400 });
    const id = send('/codex verify:"touch verification-ran.txt" this fails');
    const started = await telegram.waitForSent((m) => replyTarget(m) === id && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const outcome = await outcomeOf(runId);
    expect(outcome.text).toMatch(new RegExp(`^\\[run ${runId}\\] failed · codex · `));
    expect(outcome.text).not.toMatch(/[Vv]erif/);
    expect(existsSync(join(repo, 'verification-ran.txt'))).toBe(false);
    expect(await details(runId)).toMatch(/verify: touch verification-ran\.txt \(message, 1 min\)\n/);
  });

  it(
    'stops a verification at verify_timeout_minutes and offers Fix',
    async () => {
      model.enqueue({ kind: 'message', text: 'Started the server.' });
      const id = send('/codex verify:"echo serving; sleep 600" start the server');
      const started = await telegram.waitForSent((m) => replyTarget(m) === id && m.text.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.text);
      const outcome = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${runId}] completed`),
        WAIT_MS + 60_000,
      );
      expect(outcome.text).toMatch(new RegExp(`^\\[run ${runId}\\] completed · verification timed out · codex · `));
      // While it ran, the live status of the `started` message said so.
      const startedMessage = telegram.sentMessages[telegram.sent.indexOf(started)]!;
      expect(
        telegram.edits.some(
          (e) =>
            e.message_id === startedMessage.message_id && e.text.includes('step: verifying: echo serving; sleep 600'),
        ),
      ).toBe(true);
      expect(outcome.text).toContain('limit of 1 min (verify_timeout_minutes)');
      expect(outcome.text).toContain('serving');
      expect(Object.keys(buttonsOf(outcome))).toEqual(['Fix']);
    },
    3 * WAIT_MS,
  );
});
