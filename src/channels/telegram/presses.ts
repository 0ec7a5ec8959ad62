/**
 * Presses of baton's inline-keyboard buttons (`callback_query`): normalized and handed to the
 * press handler, answered with `answerCallbackQuery`.
 */
import type { PressHandler } from '../types.js';
import { staleButtonAnswer } from '../../wording/channels.js';
import { parseCallbackData } from './buttons.js';
import { describeTelegramError } from './errors.js';
import { telegramDedupeKey } from './normalize.js';
import type { TelegramReceiveContext } from './receive.js';

/** Longest `answerCallbackQuery` text, in characters (Bot API: 0-200 characters). */
const CALLBACK_ANSWER_MAX_CHARS = 200;

/**
 * Registers the press handling on the bot. A press of a button baton did not make, or with no
 * press handler, is answered that the button does nothing; any other is handed to `presses`
 * while its inbox entry is kept, answered once at most.
 */
export function receiveTelegramPresses(
  context: TelegramReceiveContext,
  presses: PressHandler | undefined,
  token: string,
): void {
  const { bot, me, clock, logger, inbox } = context;
  bot.on('callback_query:data', async (ctx) => {
    const query = ctx.callbackQuery;
    const key = telegramDedupeKey(me.id, ctx.update.update_id);
    const press = parseCallbackData(query.data);
    const message = query.message;
    if (!press || !message || !presses) {
      await inbox.forget(key);
      await ctx.answerCallbackQuery({ text: staleButtonAnswer }).catch(() => undefined);
      return;
    }
    let answered = false;
    await inbox.track(key, () =>
      presses({
        platform: 'telegram',
        dedupeKey: key,
        chatId: String(message.chat.id),
        ...(message.is_topic_message && message.message_thread_id !== undefined
          ? { threadId: String(message.message_thread_id) }
          : {}),
        messageId: String(message.message_id),
        senderId: String(query.from.id),
        isDirect: message.chat.type === 'private',
        action: press.action,
        arg: press.arg,
        receivedAt: clock.now(),
        answer: async (text) => {
          if (answered) return;
          answered = true;
          // A replayed press (after a restart) is too old to answer: Telegram refuses it, nothing else depends on it.
          await ctx
            .answerCallbackQuery({ text: text.slice(0, CALLBACK_ANSWER_MAX_CHARS) })
            .catch((err: unknown) =>
              logger.info(
                { channel: 'telegram', err: describeTelegramError(err, token) },
                'could not answer a button press',
              ),
            );
        },
      }),
    );
  });
}
