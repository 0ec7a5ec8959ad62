/**
 * Telegram failures as baton's error kinds (Bot API "Making requests": `error_code`,
 * `parameters.retry_after` in seconds), with the bot token never let into a message or log line.
 */
import { GrammyError, HttpError } from 'grammy';
import { safeErrorMessage } from '../../core/logger.js';
import { AttachmentDownloadError, networkDownloadFailure } from '../download.js';
import { ChannelSendError } from '../types.js';
import { telegramFileGone, telegramFileTooBig } from '../../wording/channels.js';

/**
 * Maps a grammY error to a send failure: 429 `rate_limited` with its wait, 5xx and 401 `network`
 * (the owner fixes a revoked token once; the pending messages should still go out), a closed
 * forum topic or a moved group `refused` with the fact, text Telegram cannot take `malformed`.
 */
export function classifyTelegramError(err: unknown, token: string): ChannelSendError {
  if (err instanceof ChannelSendError) return err;
  if (err instanceof GrammyError) {
    const message = redactToken(`Telegram ${err.method}: ${err.error_code} ${err.description}`, token);
    if (err.error_code === 429) {
      const seconds = err.parameters.retry_after ?? 30;
      return new ChannelSendError('rate_limited', message, { cause: err, retryAfterMs: seconds * 1000 });
    }
    if (err.error_code >= 500 || err.error_code === 401)
      return new ChannelSendError('network', message, { cause: err });
    // Bot API: a group upgraded to a supergroup answers 400 with parameters.migrate_to_chat_id.
    const movedTo = err.parameters.migrate_to_chat_id;
    if (movedTo !== undefined)
      return new ChannelSendError('refused', message, { cause: err, movedToChatId: String(movedTo) });
    // A forum topic an admin closed (closeForumTopic): the chat's General topic still takes messages.
    if (err.error_code === 400 && /TOPIC_CLOSED/.test(err.description))
      return new ChannelSendError('refused', message, { cause: err, threadClosed: true });
    if (err.error_code === 400 && /too long|parse entities|text must be non-empty/i.test(err.description)) {
      return new ChannelSendError('malformed', message, { cause: err });
    }
    return new ChannelSendError('refused', message, { cause: err });
  }
  // The cause is dropped on purpose for network errors: it may carry the request URL, which holds the token.
  if (err instanceof HttpError)
    return new ChannelSendError('network', redactToken(`Telegram unreachable: ${err.message}`, token));
  return new ChannelSendError('network', redactToken(err instanceof Error ? err.message : String(err), token));
}

/**
 * A failed `getFile` as a download failure (Bot API "getFile": bots download files of at most
 * 20 MB, answered 400 "file is too big"; a file id Telegram no longer knows answers 400 "wrong
 * file_id or the file is temporarily unavailable"). 429 and 5xx are retried; grammY's HttpError is
 * the network.
 */
export function getFileFailure(err: unknown, token: string): AttachmentDownloadError {
  if (err instanceof GrammyError) {
    const what = redactToken(`Telegram getFile answered ${err.error_code} ${err.description}`, token);
    if (err.error_code === 429)
      return new AttachmentDownloadError(what, {
        transient: true,
        retryAfterMs: (err.parameters.retry_after ?? 1) * 1000,
        cause: err,
      });
    if (err.error_code >= 500) return new AttachmentDownloadError(what, { transient: true, cause: err });
    if (/file is too big/i.test(err.description)) {
      return new AttachmentDownloadError(telegramFileTooBig.reason, {
        transient: false,
        fix: telegramFileTooBig.fix,
      });
    }
    if (/wrong file_id|file_id|temporarily unavailable|file reference/i.test(err.description)) {
      return new AttachmentDownloadError(telegramFileGone, { transient: false });
    }
    return new AttachmentDownloadError(what, { transient: false, cause: err });
  }
  if (err instanceof HttpError) return networkDownloadFailure(err.error, (text) => redactToken(text, token));
  return networkDownloadFailure(err, (text) => redactToken(text, token));
}

/** An error as one line for the log or the channel state: the API's code and description when it has them. */
export function describeTelegramError(err: unknown, token: string): string {
  if (err instanceof GrammyError) return redactToken(`${err.error_code} ${err.description}`, token);
  return redactToken(safeErrorMessage(err), token);
}

/** The bot token is part of every Bot API URL; never let it into a message or log line. */
export function redactToken(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}
