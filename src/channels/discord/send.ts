/**
 * Sending and editing Discord messages through REST ("Create Message", "Edit Message"): a reply
 * that references the request, every mention suppressed, embeds off, baton's buttons as
 * components.
 */
import {
  MessageFlags,
  Routes,
  type APIMessage,
  type REST,
  type RESTPatchAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
} from 'discord.js';
import type { MessageEdit, OutboundMessage } from '../types.js';
import { discordComponents } from './buttons.js';
import { classifyDiscordError } from './errors.js';

/** Longest `content` of one message, in characters ("Create Message": max 2000). */
export const DISCORD_MAX_MESSAGE_LENGTH = 2000;

/** What sending and editing on Discord need: baton's REST client and the bot token (to redact). */
export interface DiscordSendContext {
  rest: REST;
  token: string;
}

/**
 * Creates one message replying to the request; no mention in it can ping anyone.
 *
 * @throws ChannelSendError as {@link classifyDiscordError} maps Discord's answer.
 */
export async function sendDiscordMessage(
  { rest, token }: DiscordSendContext,
  message: OutboundMessage,
): Promise<{ messageId: string }> {
  const body: RESTPostAPIChannelMessageJSONBody = {
    content: message.text,
    // parse: [] — `@everyone`, `<@id>` and role mentions in the text notify nobody. The requester
    // is still notified of the reply, as on Telegram.
    allowed_mentions: { parse: [], replied_user: true },
    flags: MessageFlags.SuppressEmbeds,
    ...(message.buttons?.length ? { components: discordComponents(message.buttons) } : {}),
    ...(message.replyToMessageId
      ? { message_reference: { message_id: message.replyToMessageId, fail_if_not_exists: false } }
      : {}),
  };
  try {
    const sent = (await rest.post(Routes.channelMessages(message.chatId), { body })) as APIMessage;
    return { messageId: sent.id };
  } catch (err) {
    throw classifyDiscordError(err, 'create message', token);
  }
}

/**
 * Edits a message the bot sent (`PATCH /channels/{channel}/messages/{message}`, Discord "Edit
 * Message"), through the same @discordjs/rest client as sends, so its rate-limit buckets are
 * shared. Discord accepts unchanged content. No mention in the text can ping anyone.
 *
 * @throws ChannelSendError as {@link classifyDiscordError} maps Discord's answer.
 */
export async function editDiscordMessage({ rest, token }: DiscordSendContext, edit: MessageEdit): Promise<void> {
  // `components` always sent: an edit without buttons removes them (Discord keeps them otherwise).
  const body: RESTPatchAPIChannelMessageJSONBody = {
    content: edit.text,
    allowed_mentions: { parse: [] },
    components: edit.buttons?.length ? discordComponents(edit.buttons) : [],
  };
  try {
    await rest.patch(Routes.channelMessage(edit.chatId, edit.messageId), { body });
  } catch (err) {
    throw classifyDiscordError(err, 'edit message', token);
  }
}
