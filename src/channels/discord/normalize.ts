/**
 * Discord message → {@link InboundMessage}. Discord API facts ("Message Formatting": user
 * mentions are `<@id>`, the legacy nickname form `<@!id>`; "Message Resource": `message_reference`,
 * `referenced_message`, `webhook_id`; system message types).
 */
import type { IncomingAttachment, IncomingVoice, InboundMessage } from '../types.js';

/** `MessageReferenceType.Forward`. */
const DISCORD_FORWARD = 1;

/** The fields of a discord.js `Message` baton reads (a real `Message` satisfies this). */
export interface DiscordMessageLike {
  id: string;
  channelId: string;
  /** null in a direct message. */
  guildId: string | null;
  content: string;
  /** Set when a webhook posted the message. */
  webhookId: string | null;
  /** True for join notices, pins and other messages Discord itself writes. */
  system: boolean;
  author: { id: string; bot: boolean; username: string; globalName: string | null };
  /** `type` 1 is a forward (Discord "Message Reference Types": DEFAULT 0, FORWARD 1). */
  reference: { messageId?: string | undefined; type?: number | undefined } | null;
  /** Files of the message (discord.js `Collection<id, Attachment>`: `url`, `name`, `size` in bytes). */
  attachments?: { values(): Iterable<DiscordAttachmentLike> } | undefined;
}

/** The fields of a discord.js `Attachment` baton reads. */
export interface DiscordAttachmentLike {
  url: string;
  name: string;
  size: number;
  /** Media type (`content_type`), e.g. `audio/ogg`; null or absent when Discord gave none. */
  contentType?: string | null | undefined;
  /** Length in seconds of a voice message's audio (`duration_secs`); null or absent for other files. */
  duration?: number | null | undefined;
}

/**
 * The voice message of a message: Discord sends one as an audio attachment with `duration_secs`
 * (and the `IS_VOICE_MESSAGE` flag); an audio file uploaded as a file has no duration and stays
 * a file.
 */
function discordVoiceOf(
  attachments: readonly DiscordAttachmentLike[],
  attach: (attachment: DiscordAttachmentLike) => IncomingAttachment,
): IncomingVoice | undefined {
  const audio = attachments.find(
    (a) => a.contentType?.startsWith('audio/') && a.duration !== null && a.duration !== undefined,
  );
  if (!audio) return undefined;
  return { ...attach(audio), durationSeconds: Math.ceil(audio.duration!), mimeType: audio.contentType ?? undefined };
}

/**
 * The name Discord's clients give a long message they turn into a file (over 2,000 characters,
 * 4,000 with Nitro); its text is the rest of the message.
 */
export const DISCORD_PASTE_FILE_NAME = 'message.txt';

/** The message a reply refers to, when discord.js has it (from `referenced_message`). */
export interface DiscordReferencedMessage {
  authorId: string;
  content: string;
}

/**
 * Normalizes a message, or returns undefined when it is not meant for this bot: a guild message
 * that neither mentions the bot nor replies to one of its messages, or a system message.
 * Direct messages are always for the bot.
 *
 * @param botId - this bot's user id (from READY).
 */
export function normalizeDiscordMessage(
  message: DiscordMessageLike,
  botId: string,
  referenced: DiscordReferencedMessage | undefined,
  receivedAt: Date,
  attach?: (attachment: DiscordAttachmentLike) => IncomingAttachment,
): InboundMessage | undefined {
  if (message.system) return undefined;
  const isDirect = message.guildId === null;
  const mentioned = new RegExp(`<@!?${botId}>`).test(message.content);
  const repliesToBot = referenced?.authorId === botId;
  if (!isDirect && !mentioned && !repliesToBot) return undefined;
  const replyTo = message.reference?.messageId;
  const files = attach && message.attachments ? [...message.attachments.values()] : [];
  const voice = attach ? discordVoiceOf(files, attach) : undefined;
  const attachments = voice || !attach ? [] : files.map(attach);
  return {
    platform: 'discord',
    dedupeKey: message.id,
    chatId: message.channelId,
    isDirect,
    ...(mentioned ? { mentioned: true } : {}),
    messageId: message.id,
    senderId: message.author.id,
    senderName: message.author.globalName ?? message.author.username,
    senderIsBot: message.author.bot || message.webhookId !== null || message.author.id === botId,
    text: message.content
      .replace(new RegExp(`<@!?${botId}>`, 'g'), ' ')
      .replace(/[ \t]{2,}/g, ' ')
      .trim(),
    ...(replyTo !== undefined ? { replyToMessageId: replyTo } : {}),
    ...(repliesToBot ? { replyToBotText: referenced.content } : {}),
    ...(message.reference?.type === DISCORD_FORWARD ? { forwarded: true } : {}),
    ...(attachments.length > 0 ? { attachments } : {}),
    ...(voice ? { voice } : {}),
    receivedAt,
  };
}

/**
 * What the inbox keeps of a Discord message: the fields {@link normalizeDiscordMessage} reads (the
 * attachments as a list), plus the replied-to message when discord.js had it. Plain JSON, so a
 * restarted process can handle the message without discord.js having it cached.
 */
export interface DiscordInboxPayload {
  message: Omit<DiscordMessageLike, 'attachments'> & { attachments: DiscordAttachmentLike[] };
  referenced?: DiscordReferencedMessage;
}

/** The {@link DiscordInboxPayload} of a message. */
export function discordInboxPayload(
  message: DiscordMessageLike,
  referenced: DiscordReferencedMessage | undefined,
): DiscordInboxPayload {
  const { id, channelId, guildId, content, webhookId, system, author, reference } = message;
  return {
    message: {
      id,
      channelId,
      guildId,
      content,
      webhookId,
      system,
      author: { id: author.id, bot: author.bot, username: author.username, globalName: author.globalName },
      reference: reference
        ? {
            ...(reference.messageId !== undefined ? { messageId: reference.messageId } : {}),
            ...(reference.type !== undefined ? { type: reference.type } : {}),
          }
        : null,
      attachments: message.attachments
        ? [...message.attachments.values()].map((a) => ({
            url: a.url,
            name: a.name,
            size: a.size,
            ...(a.contentType ? { contentType: a.contentType } : {}),
            ...(a.duration !== null && a.duration !== undefined ? { duration: a.duration } : {}),
          }))
        : [],
    },
    ...(referenced ? { referenced: { authorId: referenced.authorId, content: referenced.content } } : {}),
  };
}

/**
 * What the inbox keeps of a press of a baton button (an INTERACTION_CREATE of a button): enough
 * to act on it and answer it after a restart, when discord.js no longer has the interaction. The
 * token answers the interaction through REST for 15 minutes (Discord "Interactions: Followup
 * Messages").
 */
export interface DiscordPressPayload {
  press: {
    /** The interaction's id: the press's dedupe key. */
    id: string;
    applicationId: string;
    token: string;
    channelId: string;
    guildId: string | null;
    messageId: string;
    userId: string;
    customId: string;
  };
}

/** What the Discord inbox keeps: a message or a press. */
export type DiscordStored = DiscordInboxPayload | DiscordPressPayload;

/** Arrival order of two stored messages or presses: by snowflake id (creation time first), as integers. */
export function compareDiscordPayloads(a: DiscordStored, b: DiscordStored): number {
  const ai = BigInt('press' in a ? a.press.id : a.message.id);
  const bi = BigInt('press' in b ? b.press.id : b.message.id);
  return ai === bi ? 0 : ai < bi ? -1 : 1;
}
