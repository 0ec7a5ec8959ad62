/**
 * Files on Discord: one file sent as a message's attachment (multipart "Create Message"), and a
 * message's attachments fetched from Discord's CDN when a task needs them.
 */
import { MessageFlags, Routes, type APIMessage, type RESTPostAPIChannelMessageJSONBody } from 'discord.js';
import { fetchDownload } from '../download.js';
import { ChannelSendError, type IncomingAttachment, type OutboundDocument } from '../types.js';
import { classifyDiscordError } from './errors.js';
import { DISCORD_PASTE_FILE_NAME, type DiscordAttachmentLike } from './normalize.js';
import { DISCORD_MAX_MESSAGE_LENGTH, type DiscordSendContext } from './send.js';

/**
 * Largest file a bot attaches, in bytes: Discord's default upload limit is 10 MiB per file where
 * the server has no boosts (discord.com/developers/docs/reference "Uploading Files"; the whole
 * request may be at most 25 MiB).
 */
export const DISCORD_MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * Creates one message carrying a file (multipart/form-data: `payload_json` and `files[0]`, as
 * @discordjs/rest builds it), replying to the request, the caption as its content.
 *
 * @throws ChannelSendError `refused` for a file over {@link DISCORD_MAX_FILE_BYTES} (not sent),
 *   else as {@link classifyDiscordError} maps Discord's answer.
 */
export async function sendDiscordDocument(
  { rest, token }: DiscordSendContext,
  document: OutboundDocument,
): Promise<{ messageId: string }> {
  if (document.content.length > DISCORD_MAX_FILE_BYTES) {
    throw new ChannelSendError(
      'refused',
      `Discord create message: ${document.filename} is ${document.content.length} bytes, over the 10 MiB a bot may attach in a server without boosts`,
    );
  }
  const body: RESTPostAPIChannelMessageJSONBody = {
    ...(document.caption ? { content: document.caption.slice(0, DISCORD_MAX_MESSAGE_LENGTH) } : {}),
    allowed_mentions: { parse: [], replied_user: true },
    flags: MessageFlags.SuppressEmbeds,
    attachments: [{ id: '0', filename: document.filename }],
    ...(document.replyToMessageId
      ? { message_reference: { message_id: document.replyToMessageId, fail_if_not_exists: false } }
      : {}),
  };
  try {
    const sent = (await rest.post(Routes.channelMessages(document.chatId), {
      body,
      files: [{ name: document.filename, data: document.content }],
    })) as APIMessage;
    return { messageId: sent.id };
  } catch (err) {
    throw classifyDiscordError(err, 'create message', token);
  }
}

/**
 * A Discord attachment, downloaded only when the dispatcher asks: a GET of its CDN URL (signed by
 * Discord; no bot token is sent). discord.js has no download helper.
 */
export function discordAttachment(file: DiscordAttachmentLike): IncomingAttachment {
  return {
    name: file.name,
    sizeBytes: file.size,
    ...(file.name === DISCORD_PASTE_FILE_NAME ? { pastedText: true } : {}),
    // A signed CDN link expires (about a day): then Discord answers 404, which is not retried.
    open: (signal) => fetchDownload(file.url, signal ? { signal } : {}, 'Discord'),
  };
}
