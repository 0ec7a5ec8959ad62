/**
 * The Telegram adapter's sendDocument (issue #13 item 2) against the fake Bot API, in process:
 * grammY sends multipart/form-data (`document` = `attach://…` naming the file part), the caption
 * and reply go with it; a file Telegram would refuse is refused (`refused`, not retried) — empty
 * (by the fake, like Telegram) or over 50 MB (by the adapter, before any upload).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelegramAdapter, TELEGRAM_MAX_DOCUMENT_BYTES } from '../../src/channels/telegram/adapter.js';
import { ChannelSendError } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';

const TOKEN = '424242:unit-documents-token';
let telegram: FakeTelegram;
let adapter: TelegramAdapter;

beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  adapter = new TelegramAdapter({ token: TOKEN, apiRoot: telegram.url, clock: systemClock, logger: silentLogger() });
});
afterAll(async () => telegram?.close());

describe('TelegramAdapter.sendDocument', () => {
  it('sends the file as multipart with its name, caption and reply, and returns the message id', async () => {
    const content = Buffer.from('# The answer\n\nAll of it.\n');
    const { messageId } = await adapter.sendDocument({
      chatId: '111',
      filename: 'result.md',
      content,
      caption: '[run hr_0123456789ab] The whole answer: result.md',
      replyToMessageId: '5',
    });
    const doc = telegram.documents.at(-1)!;
    expect(String(doc.message_id)).toBe(messageId);
    expect(doc).toMatchObject({
      chat_id: '111',
      filename: 'result.md',
      caption: '[run hr_0123456789ab] The whole answer: result.md',
    });
    expect(doc.content).toEqual(content);
    expect(String(doc.fields['document'])).toMatch(/^attach:\/\//);
    expect(doc.fields['reply_parameters']).toEqual({ message_id: 5, allow_sending_without_reply: true });
  });

  it('an empty file is refused by Telegram, classified refused', async () => {
    const error = await adapter
      .sendDocument({ chatId: '111', filename: 'empty.md', content: Buffer.alloc(0) })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ChannelSendError);
    expect(error).toMatchObject({ kind: 'refused', retryable: false });
    expect((error as Error).message).toContain('file must be non-empty');
  });

  it('a file over 50 MB is refused before any upload', async () => {
    const calls = telegram.calls.length;
    const error = await adapter
      .sendDocument({ chatId: '111', filename: 'huge.patch', content: Buffer.alloc(TELEGRAM_MAX_DOCUMENT_BYTES + 1) })
      .catch((err: unknown) => err);
    expect(error).toMatchObject({ kind: 'refused', retryable: false });
    expect(telegram.calls.length).toBe(calls);
  });
});
