/**
 * Telegram formatting through the real grammY client against the fake Bot API, which parses
 * `parse_mode: HTML` as Telegram does (malformed HTML is 400 "can't parse entities", the 4096 limit
 * counts the text after parsing): a Markdown outcome arrives as formatted text — the diff stat a
 * `pre` block, commands `code` — showing exactly the words of the body; plain text stays plain;
 * the command menu is registered at start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelegramAdapter } from '../../src/channels/telegram/adapter.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { toPlainText } from '../../src/delivery/chat-markdown.js';
import { splitMessage } from '../../src/delivery/split.js';
import { COMMAND_MENU } from '../../src/wording/command-menu.js';
import { outcomeText } from '../../src/wording/runs.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';

const TOKEN = '123456:format-test-token';
let telegram: FakeTelegram;
let adapter: TelegramAdapter;

beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  adapter = new TelegramAdapter({
    token: TOKEN,
    apiRoot: telegram.url,
    clock: systemClock,
    logger: silentLogger(),
    commands: COMMAND_MENU,
  });
  await adapter.start(async () => {});
});

afterAll(async () => {
  await adapter?.stop();
  await telegram?.close();
});

const run = {
  id: 'hr_0123456789ab',
  parentRunId: null,
  vendor: 'codex',
  status: 'completed',
  reason: null,
  task: 't',
  cwd: '/srv/my_app <beta>',
  worktreeRoot: '/srv/my_app <beta>',
  createdAt: new Date('2026-11-29T08:00:00Z'),
  options: { timeoutMinutes: 30, progress: false },
} as unknown as Parameters<typeof outcomeText>[0]['run'];

describe('Telegram formatting', () => {
  it('registers the command menu at start', () => {
    const call = telegram.calls.find((c) => c.method === 'setMyCommands');
    expect(call?.status).toBe(200);
    expect((call!.body.commands as { command: string }[]).map((c) => c.command)).toEqual(
      COMMAND_MENU.map((c) => c.command),
    );
  });

  it('sends a Markdown outcome as HTML: the stat in a pre block, the agent’s Markdown rendered, the words unchanged', async () => {
    const body = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt: new Date('2026-11-29T08:01:05Z'),
      finalMessage: 'Fixed **two** bugs in `a<b>.ts` & friends:\n- one\n- two\n\n```ts\nconst x = a < b && c;\n```',
      diff: { stat: ' src/a<b>.ts | 2 +-\n 1 file changed', patchFilename: 'hr_0123456789ab.patch' },
    });
    await adapter.send({ chatId: '42', text: body, format: 'markdown' });
    const sent = telegram.sent.at(-1)!;
    expect(sent.parse_mode).toBe('HTML');
    // What the reader sees is the body's words, without the Markdown's marks.
    expect(sent.text).toBe(toPlainText(body));
    expect(sent.text).toContain('/srv/my_app <beta>');
    expect(sent.text).toContain(' src/a<b>.ts | 2 +-\n 1 file changed');
    const message = telegram.sentMessages.at(-1)!;
    const types = (message.entities ?? []).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['pre', 'bold', 'code']));
    const pre = message.entities!.find((e) => e.type === 'pre' && 'language' in e && e.language === 'ts');
    expect(message.text!.slice(pre!.offset, pre!.offset + pre!.length)).toBe('const x = a < b && c;');
  });

  it('keeps a plain message plain: no parse_mode, markup characters shown as written', async () => {
    await adapter.send({ chatId: '42', text: '"<b>*x*</b>" is not a project alias.' });
    const sent = telegram.sent.at(-1)!;
    expect(sent.parse_mode).toBeUndefined();
    expect(sent.text).toBe('"<b>*x*</b>" is not a project alias.');
  });

  it('sends every part of a long Markdown outcome, a code block split across parts included, each valid HTML within 4096 shown characters', async () => {
    const stat = Array.from({ length: 400 }, (_, i) => ` src/module-${i}/file_${i}.ts | ${i % 9} ++--`).join('\n');
    const body = outcomeText({
      run,
      status: 'completed',
      reason: null,
      endedAt: new Date('2026-11-29T08:01:05Z'),
      finalMessage: 'Done & dusted.',
      diff: { stat, patchFilename: 'x.patch' },
    });
    const parts = splitMessage(body, adapter.maxMessageLength);
    expect(parts.length).toBeGreaterThan(2);
    const before = telegram.sent.length;
    for (const text of parts) await adapter.send({ chatId: '42', text, format: 'markdown' });
    const sent = telegram.sent.slice(before);
    expect(sent).toHaveLength(parts.length);
    for (const [i, message] of telegram.sentMessages.slice(-parts.length).entries()) {
      expect(message.text!.length).toBeLessThanOrEqual(4096);
      // Each part's stat lines sit in a pre block of their own part.
      if (i < parts.length - 1) expect(message.entities?.some((e) => e.type === 'pre')).toBe(true);
    }
    expect(sent.map((m) => m.text).join('\n')).toContain(' src/module-399/file_399.ts | 3 ++--');
  });

  it('the fake refuses what Telegram refuses: malformed HTML and over 4096 characters after parsing', async () => {
    const post = async (body: Record<string, unknown>): Promise<{ ok: boolean; description?: string }> =>
      (
        await fetch(`${telegram.url}/bot${TOKEN}/sendMessage`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ chat_id: 42, parse_mode: 'HTML', ...body }),
        })
      ).json() as Promise<{ ok: boolean; description?: string }>;
    for (const text of ['<b>open', 'a < b', 'x &nbsp; y', 'x & y', '<div>x</div>', '<b><i>x</b></i>']) {
      const answer = await post({ text });
      expect(answer.ok, text).toBe(false);
      expect(answer.description, text).toMatch(/^Bad Request: can't parse entities/);
    }
    expect((await post({ text: `<b>${'&amp;'.repeat(4096)}</b>` })).ok).toBe(true);
    expect((await post({ text: `<b>${'&amp;'.repeat(4097)}</b>` })).description).toBe(
      'Bad Request: message is too long',
    );
  });
});
