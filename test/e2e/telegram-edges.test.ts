/**
 * Edges a new user meets on a phone, through `baton start` and the real grammY client (issue #10):
 * smart quotes around a path with spaces (item 6), and a long outcome whose second part Telegram
 * refuses as too long, re-split and numbered as finally sent (item 7).
 */
import { execa } from 'execa';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;
let spaced: string;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  spaced = join(world.root, 'my project');
  await mkdir(spaced, { recursive: true });
  await execa('git', ['init', '-q', spaced]);
});
afterAll(async () => world?.dispose());

describe('Telegram edges', () => {
  it.each([
    ['“', '”'],
    ['„', '“'],
    ['‘', '’'],
    ['«', '»'],
  ])(
    'reads in:%s…%s like in:"…"',
    async (open, close) => {
      const { telegram, openai } = world;
      openai.setFallback(() => ({ kind: 'message', text: 'Here.' }));
      const id = 200 + [...'“„‘«'].indexOf(open);
      telegram.pushUpdate(world.privateMessage(OWNER, `/codex in:${open}${spaced}${close} where am i`, id));
      const started = await telegram.waitForSent((m) => replyTarget(m) === id, WAIT_MS);
      expect(started.text).toBe(`[run ${runIdOf(started.text)}] started · codex · ${spaced}`);
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    },
    120_000,
  );

  it('numbers a re-split outcome 1/n … n/n after Telegram refuses a part as too long', async () => {
    const { telegram, openai } = world;
    const finalText = Array.from({ length: 200 }, (_, i) => `result line ${i} ${'r'.repeat(30)}`).join('\n');
    openai.setFallback(() => ({ kind: 'message', text: finalText }));
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex write a long report', 300));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 300, WAIT_MS);
    const runId = runIdOf(started.text);
    // Telegram counts some texts longer than baton does: it refuses the outcome's second part once.
    telegram.failNext('sendMessage', {
      status: 400,
      body: { ok: false, error_code: 400, description: 'Bad Request: message is too long' },
      when: (body) => typeof body['text'] === 'string' && body['text'].startsWith(`[run ${runId}] (2/`),
    });
    const first = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    const firstIndex = telegram.sent.indexOf(first);
    // Wait for the last part: its header says k/k.
    await telegram.waitForSent(
      (m) => /^\[run hr_[0-9a-f]{12}\] \((\d+)\/\1\)\n/.test(m.text) && m.text.startsWith(`[run ${runId}]`),
      WAIT_MS,
    );
    const rest = telegram.sent.slice(firstIndex + 1).filter((m) => m.text.startsWith(`[run ${runId}] (`));
    const n = rest.length + 1;
    expect(n).toBeGreaterThan(2);
    expect(rest.map((m) => m.text.split('\n')[0])).toEqual(
      Array.from({ length: n - 1 }, (_, i) => `[run ${runId}] (${i + 2}/${n})`),
    );
    expect(rest.every((m) => m.text.length <= 4096)).toBe(true);
    // Telegram shows a message without its trailing newline (the fake, as shown, too): the cuts
    // fall at line ends, so the parts join by one.
    const joined = [first, ...rest]
      .map((m, i) => (i === 0 ? m.text : m.text.slice(m.text.indexOf('\n') + 1)))
      .join('\n');
    expect(joined).toContain(finalText);
  }, 120_000);

  it("keeps a run's messages in creation order when `started` meets a 500 (item 3)", async () => {
    const { telegram, openai } = world;
    openai.setFallback(() => ({ kind: 'message', text: 'Quick.' }));
    telegram.failNext('sendMessage', {
      status: 500,
      when: (body) => replyTarget(body as never) === 400 && String(body['text']).includes('] started'),
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex be quick', 400));
    // The retry worker sends `started` on its schedule (30 s backoff, 30 s ticks); `completed` waits.
    const started = await telegram.waitForSent((m) => replyTarget(m) === 400 && m.text.includes('] started'), 150_000);
    const runId = runIdOf(started.text);
    const completed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(telegram.sent.indexOf(started)).toBeLessThan(telegram.sent.indexOf(completed));
    expect(telegram.calls.filter((c) => c.method === 'sendMessage' && c.status === 500)).toHaveLength(1);
  }, 240_000);

  it('follows a group upgraded to a supergroup: the refused outcome and the /use default move (item 4)', async () => {
    const { telegram, openai } = world;
    const group = -4001;
    const supergroup = -1_004_001;
    telegram.pushMessage({ chatId: group, chatType: 'group', from: { id: OWNER }, text: `/use “${spaced}”` });
    await telegram.waitForSent(
      (m) => Number(m.chat_id) === group && m.text.startsWith('Runs in this conversation now default to'),
      WAIT_MS,
    );
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 2' } },
      { kind: 'message', text: 'Moved along.' },
    );
    telegram.pushMessage({ chatId: group, chatType: 'group', from: { id: OWNER }, text: '/codex slow one' });
    const started = await telegram.waitForSent(
      (m) => Number(m.chat_id) === group && m.text.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    // Upgraded while the run works, without the service messages: only the 400 tells baton.
    telegram.migrateGroup(group, supergroup);
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(Number(outcome.chat_id)).toBe(supergroup);
    expect(outcome.text).toContain('Moved along.');
    openai.enqueue({ kind: 'message', text: 'Here.' });
    telegram.pushMessage({
      chatId: supergroup,
      chatType: 'supergroup',
      from: { id: OWNER },
      text: '/codex where am i',
    });
    const again = await telegram.waitForSent(
      (m) => Number(m.chat_id) === supergroup && m.text.includes('] started'),
      WAIT_MS,
    );
    expect(again.text.endsWith(` · ${spaced}`)).toBe(true);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(again.text)}] completed`), WAIT_MS);
  }, 120_000);

  it("moves the conversation on the migrate service messages, before the new chat's next message (item 4)", async () => {
    const { telegram, openai } = world;
    const group = -4002;
    const supergroup = -1_004_002;
    telegram.pushMessage({
      chatId: group,
      chatType: 'group',
      from: { id: OWNER },
      text: `/use ${JSON.stringify(spaced)}`,
    });
    await telegram.waitForSent(
      (m) => Number(m.chat_id) === group && m.text.startsWith('Runs in this conversation now default to'),
      WAIT_MS,
    );
    openai.enqueue({ kind: 'message', text: 'Here.' });
    telegram.batch(() => {
      telegram.migrateGroup(group, supergroup, { announce: true, by: OWNER });
      telegram.pushMessage({
        chatId: supergroup,
        chatType: 'supergroup',
        from: { id: OWNER },
        text: '/codex where am i',
      });
    });
    const started = await telegram.waitForSent(
      (m) => Number(m.chat_id) === supergroup && m.text.includes('] started'),
      WAIT_MS,
    );
    expect(started.text.endsWith(` · ${spaced}`)).toBe(true);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
  }, 120_000);

  it('joins a paste the client split at 4096 characters into one task, and says so (item 5)', async () => {
    const { telegram, openai } = world;
    openai.setFallback(() => ({ kind: 'message', text: 'Read it all.' }));
    const head = '/codex summarize this log:\n';
    const line = 'log line with some words in it\n';
    let first = head;
    while (first.length + line.length <= 4096) first += line;
    first += 'x'.repeat(4096 - first.length);
    expect(first.length).toBe(4096);
    const second = 'and the rest of it: END-OF-PASTE-MARKER';
    telegram.batch(() => {
      telegram.pushUpdate(world.privateMessage(OWNER, first, 500));
      telegram.pushUpdate(world.privateMessage(OWNER, second, 501));
    });
    const started = await telegram.waitForSent((m) => replyTarget(m) === 500, WAIT_MS);
    const taskLength = first.length - '/codex '.length + 1 + second.length;
    expect(started.text).toContain(`· task: ${taskLength.toLocaleString('en-US')} characters from 2 messages`);
    const runId = runIdOf(started.text);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(openai.requests.some((r) => JSON.stringify(r.body).includes('END-OF-PASTE-MARKER'))).toBe(true);
    // The second part got no answer of its own ("Send /help …").
    expect(telegram.sent.filter((m) => replyTarget(m) === 501)).toEqual([]);
  }, 120_000);
});
