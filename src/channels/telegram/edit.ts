/** Editing a message the bot sent on Telegram (`editMessageText`): the live status of a run. */
import { GrammyError } from 'grammy';
import type { MessageEdit } from '../types.js';
import { inlineKeyboard } from './buttons.js';
import { classifyTelegramError } from './errors.js';
import { telegramFormatOptions, withTelegramFormat, type TelegramSendContext } from './send.js';

/**
 * `editMessageText` on a message the bot sent (Bot API "Updating messages"). Telegram answers
 * 400 "message is not modified" when the text is what the message already says: that is the
 * wanted state, so it is success. A 429 of at most 5 s is waited out inline by the auto-retry
 * plugin, as for sends; a longer one is thrown with its `retry_after`. A `markdown` text falls
 * back to plain as a send does.
 *
 * @throws ChannelSendError as {@link classifyTelegramError} maps Telegram's answer.
 */
export async function editTelegramMessage(
  { bot, token, logger }: TelegramSendContext,
  edit: MessageEdit,
): Promise<void> {
  await withTelegramFormat(logger, edit, async (text, html) => {
    try {
      await bot.api.editMessageText(edit.chatId, Number(edit.messageId), text, {
        ...telegramFormatOptions(html),
        ...inlineKeyboard(edit.buttons),
      });
    } catch (err) {
      if (err instanceof GrammyError && err.error_code === 400 && /message is not modified/i.test(err.description))
        return;
      throw classifyTelegramError(err, token);
    }
  });
}
