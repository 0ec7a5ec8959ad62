/**
 * Telegram passes the channel contract: grammY's long poll against the fake Bot API.
 */
import type { Message, Update } from 'grammy/types';
import { TelegramAdapter } from '../../../src/channels/telegram/adapter.js';
import { systemClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { startFakeTelegram, type FailureSpec, type FakeTelegram } from '../../fakes/fake-telegram.js';
import {
  EVERY_CAPABILITY,
  RATE_LIMIT_RETRY_AFTER_MS,
  type ChannelDriver,
  type SendFailure,
  type Sender,
  type SentRecord,
} from './driver.js';
import { describeChannelContract } from './suite.js';

const TOKEN = '123456:CONTRACT-token-for-the-fake-bot-api-only';
const IDS = { owner: 111, guest: 222, stranger: 333 } as const;

/** The Bot API's answers for each failure (Bot API "Making requests": `retry_after` in seconds). */
const FAILURES: Record<SendFailure, FailureSpec> = {
  transient: { status: 502 },
  permanent: {
    status: 403,
    body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
  },
  rate_limited: {
    status: 429,
    body: {
      ok: false,
      error_code: 429,
      description: 'Too Many Requests: retry after 42',
      parameters: { retry_after: RATE_LIMIT_RETRY_AFTER_MS / 1000 },
    },
  },
};

type Keyboard = { text: string; callback_data?: string }[][];
const keyboardOf = (message: Message | undefined): Keyboard =>
  (message?.reply_markup as { inline_keyboard?: Keyboard } | undefined)?.inline_keyboard ?? [];

function sentOf(telegram: FakeTelegram): SentRecord[] {
  return telegram.sent.map((body, i) => {
    const replyTo = (body['reply_parameters'] as { message_id?: number } | undefined)?.message_id;
    const shown = telegram.sentMessages[i];
    return {
      messageId: String(shown?.message_id),
      text: body.text,
      replyTo: replyTo === undefined ? undefined : String(replyTo),
      buttons: keyboardOf(shown)
        .flat()
        .map((b) => b.text),
    };
  });
}

/** User `userId` presses the button `label` under the bot's message `messageId`; @returns the update's id. */
function pressIn(telegram: FakeTelegram, messageId: string, label: string, userId: number): number {
  const shown = telegram.sentMessages.find((m) => String(m.message_id) === messageId);
  const button = keyboardOf(shown)
    .flat()
    .find((b) => b.text === label);
  if (!shown || !button?.callback_data) throw new Error(`no button ${label} under message ${messageId}`);
  return telegram.pressButton({ from: { id: userId }, message: shown, callbackData: button.callback_data });
}

function telegramDriver(): ChannelDriver {
  let telegram: FakeTelegram;
  let adapter: TelegramAdapter | undefined;
  let nextMessageId = 100_000;
  let nextUpdateId = 500_000;

  const message = (from: Sender, text: string, document?: Message['document']): Message => {
    const chatId = from === 'self' ? IDS.owner : IDS[from];
    const user = from === 'self' ? telegram.botUser : { id: chatId, is_bot: false, first_name: `user${chatId}` };
    const command = /^\/\S+/.exec(text);
    return {
      message_id: nextMessageId++,
      date: Math.floor(Date.now() / 1000),
      chat: { id: chatId, type: 'private', first_name: `user${chatId}` },
      from: user,
      ...(document ? { document, ...(text ? { caption: text } : {}) } : { text }),
      ...(command && !document ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
    } as Message;
  };

  return {
    platform: 'telegram',
    capabilities: EVERY_CAPABILITY,
    trust: { owner: String(IDS.owner), guest: String(IDS.guest) },
    startPlatform: async () => {
      telegram = await startFakeTelegram({ token: TOKEN });
    },
    startAdapter: async ({ handler, presses, inbox }) => {
      adapter = new TelegramAdapter({
        token: TOKEN,
        apiRoot: telegram.url,
        clock: systemClock,
        logger: silentLogger(),
        inbox,
        presses,
      });
      await adapter.start(handler);
      return adapter;
    },
    inject: async (from, text, file) => {
      const document = file
        ? { ...telegram.addFile(file.bytes), file_name: file.name, mime_type: 'text/plain' }
        : undefined;
      // Above every id the fake handed out itself, as Telegram's ids only grow.
      nextUpdateId = Math.max(nextUpdateId, telegram.lastUpdateId() + 1);
      const update = { update_id: nextUpdateId++, message: message(from, text, document) } as Update;
      telegram.pushUpdate(update);
      return { messageId: String(update.message!.message_id), redeliver: async () => void telegram.pushUpdate(update) };
    },
    ownerTarget: () => ({ platform: 'telegram', chatId: String(IDS.owner) }),
    sent: () => sentOf(telegram),
    documents: () => telegram.documents.map((d) => ({ filename: d.filename, content: d.content })),
    edits: () => telegram.edits.map((e) => ({ messageId: String(e.message_id), text: e.text })),
    press: async (messageId, label, from) => {
      const updateId = pressIn(telegram, messageId, label, IDS[from]);
      return { redeliver: async () => telegram.redeliverUpdate(updateId) };
    },
    // Every answer asked for, accepted or not: Telegram refuses a second answer to one press.
    pressAnswers: () =>
      telegram.calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => String(c.body['text'] ?? '')),
    failNextSend: (failure) => telegram.failNext('sendMessage', FAILURES[failure]),
    stop: async () => {
      await adapter?.stop();
      await telegram?.close();
    },
  };
}

describeChannelContract(telegramDriver);
