/**
 * Sending one message part to Telegram (`sendMessage`): a reply to the originating message, in
 * its forum topic, link previews off, with baton's buttons as an inline keyboard.
 */
import type { Bot } from 'grammy';
import type { Logger } from '../../core/logger.js';
import { toTelegramHtml } from '../../delivery/chat-markdown.js';
import { ChannelSendError, type OutboundMessage } from '../types.js';
import { inlineKeyboard } from './buttons.js';
import { classifyTelegramError } from './errors.js';

/** Longest message text, in UTF-16 code units (Bot API sendMessage `text`: 1-4096 characters). */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;

/** What sending and editing on Telegram need: the bot's API, its token (to redact) and the log. */
export interface TelegramSendContext {
  bot: Bot;
  token: string;
  logger: Logger;
}

/**
 * Sends one part. A `markdown` part goes as Telegram HTML ({@link toTelegramHtml}, every
 * character of the text escaped); should Telegram still refuse to parse it ("can't parse
 * entities"), it is sent again as plain text: the words matter more than their formatting. A
 * `plain` part goes without `parse_mode`, so its text can never be read as markup.
 *
 * @throws ChannelSendError as {@link classifyTelegramError} maps Telegram's answer.
 */
export function sendTelegramMessage(
  { bot, token, logger }: TelegramSendContext,
  message: OutboundMessage,
): Promise<{ messageId: string }> {
  return withTelegramFormat(logger, message, async (text, html) => {
    try {
      const sent = await bot.api.sendMessage(message.chatId, text, {
        ...telegramFormatOptions(html),
        ...(message.replyToMessageId
          ? { reply_parameters: { message_id: Number(message.replyToMessageId), allow_sending_without_reply: true } }
          : {}),
        ...(message.threadId ? { message_thread_id: Number(message.threadId) } : {}),
        ...inlineKeyboard(message.buttons),
      });
      return { messageId: String(sent.message_id) };
    } catch (err) {
      throw classifyTelegramError(err, token);
    }
  });
}

/** `parse_mode` HTML when `html`, and link previews off: the format options of a send or an edit. */
export function telegramFormatOptions(html: boolean): {
  parse_mode?: 'HTML';
  link_preview_options: { is_disabled: true };
} {
  return { ...(html ? { parse_mode: 'HTML' as const } : {}), link_preview_options: { is_disabled: true } };
}

/**
 * Calls `attempt` with a `plain` part's text as it is; with a `markdown` part as HTML, then as
 * the plain Markdown if Telegram cannot parse that.
 */
export async function withTelegramFormat<T>(
  logger: Logger,
  part: { text: string; format?: 'plain' | 'markdown' | undefined },
  attempt: (text: string, html: boolean) => Promise<T>,
): Promise<T> {
  if (part.format !== 'markdown') return attempt(part.text, false);
  try {
    return await attempt(toTelegramHtml(part.text), true);
  } catch (err) {
    if (!(err instanceof ChannelSendError && err.kind === 'malformed' && /parse entities/i.test(err.message)))
      throw err;
    logger.warn({ err: err.message }, 'Telegram could not parse the HTML of a message; sending it as plain text');
    return attempt(part.text, false);
  }
}
