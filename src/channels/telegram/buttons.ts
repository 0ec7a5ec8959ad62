/**
 * baton's buttons on Telegram: an inline keyboard whose buttons carry `action:arg` as their
 * `callback_data` (Bot API InlineKeyboardButton).
 */
import type { ButtonJson } from '../../core/buttons.js';
import { ChannelSendError } from '../types.js';

/** Longest `callback_data`, in bytes (Bot API InlineKeyboardButton: 1-64 bytes). */
export const CALLBACK_DATA_MAX_BYTES = 64;

/**
 * A button's `callback_data`: `action:arg`.
 *
 * @throws ChannelSendError `malformed` when it is over 64 bytes (baton's actions and ids are far shorter).
 */
export function callbackData(action: string, arg: string): string {
  const data = `${action}:${arg}`;
  if (Buffer.byteLength(data, 'utf8') > CALLBACK_DATA_MAX_BYTES) {
    throw new ChannelSendError('malformed', `Telegram callback_data is over ${CALLBACK_DATA_MAX_BYTES} bytes: ${data}`);
  }
  return data;
}

/** Reads `action:arg` back from `callback_data`; undefined for data baton did not write. */
export function parseCallbackData(data: string): { action: string; arg: string } | undefined {
  const match = /^([a-z_]+):(.+)$/.exec(data);
  return match ? { action: match[1]!, arg: match[2]! } : undefined;
}

/**
 * The `reply_markup` of a message with buttons: one row of them; nothing without buttons.
 *
 * @throws ChannelSendError as {@link callbackData}.
 */
export function inlineKeyboard(buttons: readonly ButtonJson[] | undefined): {
  reply_markup?: { inline_keyboard: { text: string; callback_data: string }[][] };
} {
  if (!buttons?.length) return {};
  return {
    reply_markup: {
      inline_keyboard: [buttons.map((b) => ({ text: b.label, callback_data: callbackData(b.action, b.arg) }))],
    },
  };
}
