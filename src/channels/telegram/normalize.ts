/**
 * Telegram update → {@link InboundMessage}. Bot API facts: https://core.telegram.org/bots/api
 * (Update, Message, MessageEntity `bot_command`; commands in groups may carry `@botname`).
 */
import type { Message, Update } from 'grammy/types';
import type { IncomingAttachment, IncomingVoice, InboundMessage } from '../types.js';

/** A file a Telegram message carries, before download. */
export interface TelegramFileRef {
  fileId: string;
  /** The document's own name, or `photo-<message id>.jpg` (Telegram re-encodes photos as JPEG). */
  name: string;
  /** `file_size` when Telegram announced it, in bytes. */
  sizeBytes?: number | undefined;
}

/**
 * The files of a message: the largest size of a `photo` (the last `PhotoSize`), a `document`.
 * (Bot API "Message": `photo`, `document`; "PhotoSize" sizes come smallest first.)
 */
export function telegramFilesOf(message: Message): TelegramFileRef[] {
  const files: TelegramFileRef[] = [];
  const photo = message.photo?.at(-1);
  if (photo) files.push({ fileId: photo.file_id, name: `photo-${message.message_id}.jpg`, sizeBytes: photo.file_size });
  if (message.document)
    files.push({
      fileId: message.document.file_id,
      name: message.document.file_name ?? `document-${message.message_id}`,
      sizeBytes: message.document.file_size,
    });
  return files;
}

/**
 * The voice note (`voice`, recorded in the app) or audio file (`audio`) of a message, with the
 * length and media type Telegram announced (Bot API "Voice", "Audio").
 */
function telegramVoiceOf(
  message: Message,
  attach: (file: TelegramFileRef) => IncomingAttachment,
): IncomingVoice | undefined {
  const audio = message.voice ?? message.audio;
  if (!audio) return undefined;
  const extension = audio.mime_type === 'audio/mpeg' ? 'mp3' : audio.mime_type === 'audio/mp4' ? 'm4a' : 'ogg';
  const name = (message.audio?.file_name ?? `voice-${message.message_id}.${extension}`).replace(/[/\\]/g, '_');
  return {
    ...attach({ fileId: audio.file_id, name, sizeBytes: audio.file_size }),
    durationSeconds: audio.duration,
    mimeType: audio.mime_type,
  };
}

/**
 * Normalizes a Telegram update, or returns undefined when it is not a message for this bot
 * (service messages, stickers and other media without text, a command addressed to another bot).
 * A photo or document comes with its caption as the text (empty without one).
 *
 * @param bot - this bot's user id and username (from `getMe`), without `@`.
 * @param attach - turns a file reference into an attachment that downloads it. @default files are ignored
 */
export function normalizeTelegramUpdate(
  update: Update,
  bot: { id: number; username: string },
  receivedAt: Date,
  attach?: (file: TelegramFileRef) => IncomingAttachment,
): InboundMessage | undefined {
  const message = update.message;
  if (!message?.from) return undefined;
  const files = attach ? telegramFilesOf(message) : [];
  const voice = attach ? telegramVoiceOf(message, attach) : undefined;
  const raw = message.text ?? message.caption ?? (files.length > 0 || voice ? '' : undefined);
  if (raw === undefined) return undefined;
  const named = stripBotName(raw, bot.username);
  if (named === undefined) return undefined;
  const { text, mentioned } = stripMention(named, bot.username);
  const from = message.from;
  const name = [from.first_name, from.last_name].filter(Boolean).join(' ') || from.username || String(from.id);
  // In a forum topic every message "replies" to the topic's first message; that is no reply.
  const replied =
    message.is_topic_message && message.reply_to_message?.message_id === message.message_thread_id
      ? undefined
      : message.reply_to_message;
  const replyTo = replied?.message_id;
  const replyToBotText = replied?.from?.id === bot.id ? replied.text : undefined;
  return {
    platform: 'telegram',
    // update_id is only unique per bot (and may restart after a week without updates), so the
    // bot id is part of the key.
    dedupeKey: telegramDedupeKey(bot.id, update.update_id),
    chatId: String(message.chat.id),
    isDirect: message.chat.type === 'private',
    ...(message.is_topic_message && message.message_thread_id !== undefined
      ? { threadId: String(message.message_thread_id) }
      : {}),
    ...(mentioned ? { mentioned: true } : {}),
    messageId: String(message.message_id),
    senderId: String(from.id),
    senderName: name,
    senderIsBot: from.is_bot,
    text,
    ...(replyTo !== undefined ? { replyToMessageId: String(replyTo) } : {}),
    ...(replyToBotText !== undefined ? { replyToBotText } : {}),
    // Bot API 7.0 `forward_origin`; older servers sent `forward_date` (with `forward_from…`).
    ...(message.forward_origin !== undefined || 'forward_date' in message ? { forwarded: true } : {}),
    ...(attach && files.length > 0 ? { attachments: files.map(attach) } : {}),
    ...(voice ? { voice } : {}),
    receivedAt,
  };
}

/**
 * Normalizes the parts of an album (updates sharing `media_group_id`, by `message_id`) as one
 * message: the files of every part, the caption (the parts' captions, in order, if several carry
 * one) as its text, the captioned part's identity, and the other parts' dedupe keys as
 * continuations, claimed and marked handled with it.
 */
export function normalizeTelegramAlbum(
  parts: readonly Update[],
  bot: { id: number; username: string },
  receivedAt: Date,
  attach?: (file: TelegramFileRef) => IncomingAttachment,
): InboundMessage | undefined {
  const messages = parts.flatMap((u) => normalizeTelegramUpdate(u, bot, receivedAt, attach) ?? []);
  if (messages.length <= 1) return messages[0];
  const captioned = messages.filter((m) => m.text.trim() !== '');
  const first = captioned[0] ?? messages[0]!;
  const attachments = messages.flatMap((m) => m.attachments ?? []);
  return {
    ...first,
    text: captioned.map((m) => m.text).join('\n'),
    ...(attachments.length > 0 ? { attachments } : {}),
    continuationKeys: messages.filter((m) => m !== first).map((m) => m.dedupeKey),
  };
}

/** The dedupe key of a Telegram update: `botId:update_id`. */
export function telegramDedupeKey(botId: number, updateId: number): string {
  return `${botId}:${updateId}`;
}

/** `/cmd@thisbot rest` → `/cmd rest`; `/cmd@otherbot …` → undefined (not for us). */
/**
 * `text` without the words `@<bot username>` (Telegram usernames are case-insensitive), and
 * whether it held one: a message in a group that names the bot is addressed to it.
 */
function stripMention(text: string, botUsername: string): { text: string; mentioned: boolean } {
  const mention = new RegExp(`(^|\\s)@${botUsername}(?=\\s|$|[,.:;!?])`, 'gi');
  if (!mention.test(text)) return { text, mentioned: false };
  return {
    text: text
      .replace(mention, '$1')
      .replace(/[ \t]{2,}/g, ' ')
      .trim(),
    mentioned: true,
  };
}

function stripBotName(text: string, botUsername: string): string | undefined {
  const match = /^(\/[A-Za-z0-9_]+)@([A-Za-z0-9_]+)(?=\s|$)/.exec(text);
  if (!match) return text;
  if (match[2]!.toLowerCase() !== botUsername.toLowerCase()) return undefined;
  return match[1]! + text.slice(match[0].length);
}
