/**
 * The Telegram adapter's edit (issue #14 item 3) through the real grammY client against the fake
 * Bot API, which answers as Telegram does: the same text again is 400 "message is not modified"
 * (success for baton: the message already says it), an unknown message is refused, a 429 carries
 * its retry_after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelegramAdapter } from '../../src/channels/telegram/adapter.js';
import { ChannelSendError } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';

const TOKEN = '123456:edit-test-token';
let telegram: FakeTelegram;
let adapter: TelegramAdapter;

beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  adapter = new TelegramAdapter({ token: TOKEN, apiRoot: telegram.url, clock: systemClock, logger: silentLogger() });
});

afterAll(async () => {
  await telegram?.close();
});

describe('TelegramAdapter.editMessage', () => {
  it('edits a sent message; the same text again ("message is not modified") is success', async () => {
    const { messageId } = await adapter.send({ chatId: '42', text: '[run hr_000000000001] started' });
    await adapter.editMessage({ chatId: '42', messageId, text: '[run hr_000000000001] started\nrunning · 5s' });
    await adapter.editMessage({ chatId: '42', messageId, text: '[run hr_000000000001] started\nrunning · 5s' });
    expect(telegram.edits.map((e) => e.text)).toEqual(['[run hr_000000000001] started\nrunning · 5s']);
    const notModified = telegram.calls.filter((c) => c.method === 'editMessageText' && c.status === 400);
    expect(notModified).toHaveLength(1);
    expect(telegram.edits[0]!.link_preview_options).toEqual({ is_disabled: true });
  });

  it('a message that does not exist is refused; a 429 over 5 s carries its retry_after', async () => {
    const refused = await adapter
      .editMessage({ chatId: '42', messageId: '999', text: 'x' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ChannelSendError);
    expect((refused as ChannelSendError).kind).toBe('refused');
    expect((refused as ChannelSendError).message).toContain('message to edit not found');

    const { messageId } = await adapter.send({ chatId: '42', text: 'another' });
    telegram.failNext('editMessageText', {
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 12',
        parameters: { retry_after: 12 },
      },
    });
    const limited = await adapter.editMessage({ chatId: '42', messageId, text: 'edited' }).catch((err: unknown) => err);
    expect(limited).toBeInstanceOf(ChannelSendError);
    expect(limited).toMatchObject({ kind: 'rate_limited', retryAfterMs: 12_000 });
  });
});
