/**
 * Files in and out on Telegram: a message's file, fetched only when a launch asks for it, and a
 * document sent to a chat (`sendDocument`).
 */
import { InputFile, type Bot } from 'grammy';
import { AttachmentDownloadError, fetchDownload } from '../download.js';
import { ChannelSendError, type IncomingAttachment, type OutboundDocument } from '../types.js';
import { telegramNoFilePath } from '../../wording/channels.js';
import { classifyTelegramError, getFileFailure, redactToken } from './errors.js';
import type { TelegramFileRef } from './normalize.js';

/**
 * Largest file a bot may send, in bytes (Bot API "Sending files": "50 MB max size for other
 * files" sent as multipart/form-data).
 */
export const TELEGRAM_MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

/** Longest caption, in UTF-16 code units (Bot API sendDocument `caption`: 0-1024 characters). */
const TELEGRAM_MAX_CAPTION_LENGTH = 1024;

/** grammY's default API root. */
export const TELEGRAM_API_ROOT = 'https://api.telegram.org';

/**
 * A file of a message, downloaded only when a launch asks for it: grammY's `getFile`, then a
 * streamed GET of `<api root>/file/bot<token>/<file_path>` (Bot API "getFile"; files over 20 MB
 * cannot be downloaded by bots). Not @grammyjs/files 1.2.0: its Node download is https-only (no
 * self-hosted or loopback Bot API server) and streams an error page as if it were the file.
 * Errors never carry the token, which the URL holds.
 */
export function telegramAttachment(
  bot: Bot,
  file: TelegramFileRef,
  token: string,
  apiRoot: string | undefined,
): IncomingAttachment {
  return {
    name: file.name,
    sizeBytes: file.sizeBytes,
    open: async (signal) => {
      let path: string | undefined;
      try {
        // grammY types its abort signal with a polyfill's type; the platform's signal is compatible.
        path = (await bot.api.getFile(file.fileId, signal as Parameters<Bot['api']['getFile']>[1])).file_path;
      } catch (err) {
        throw getFileFailure(err, token);
      }
      if (!path) throw new AttachmentDownloadError(telegramNoFilePath, { transient: false });
      return fetchDownload(
        `${apiRoot ?? TELEGRAM_API_ROOT}/file/bot${token}/${path}`,
        signal ? { signal } : {},
        'Telegram',
        (text) => redactToken(text, token),
      );
    },
  };
}

/**
 * Sends a file with `sendDocument` as multipart/form-data (grammY `InputFile`), the caption cut
 * to Telegram's 1,024 characters.
 *
 * @throws ChannelSendError `refused` for a file over {@link TELEGRAM_MAX_DOCUMENT_BYTES} (not
 *   sent at all), else as {@link classifyTelegramError} maps Telegram's answer.
 */
export async function sendTelegramDocument(
  bot: Bot,
  document: OutboundDocument,
  token: string,
): Promise<{ messageId: string }> {
  if (document.content.length > TELEGRAM_MAX_DOCUMENT_BYTES) {
    throw new ChannelSendError(
      'refused',
      `Telegram sendDocument: ${document.filename} is ${document.content.length} bytes, over the Bot API's 50 MB limit`,
    );
  }
  try {
    const sent = await bot.api.sendDocument(document.chatId, new InputFile(document.content, document.filename), {
      ...(document.caption ? { caption: document.caption.slice(0, TELEGRAM_MAX_CAPTION_LENGTH) } : {}),
      ...(document.replyToMessageId
        ? { reply_parameters: { message_id: Number(document.replyToMessageId), allow_sending_without_reply: true } }
        : {}),
      ...(document.threadId ? { message_thread_id: Number(document.threadId) } : {}),
    });
    return { messageId: String(sent.message_id) };
  } catch (err) {
    throw classifyTelegramError(err, token);
  }
}
