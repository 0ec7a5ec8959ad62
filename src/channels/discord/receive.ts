/**
 * Messages from the Discord gateway (`MESSAGE_CREATE`): normalized, stored in the inbox before
 * they are handled, and handled one channel at a time in arrival order; button presses are
 * handed on from the same listeners.
 */
import { Events, type ButtonInteraction, type Client, type Message } from 'discord.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { ConversationQueue } from '../conversation-queue.js';
import type { ChannelInbox } from '../inbox.js';
import type { InboundHandler, InboundMessage } from '../types.js';
import { describeDiscordError } from './errors.js';
import { discordAttachment } from './files.js';
import {
  discordInboxPayload,
  normalizeDiscordMessage,
  type DiscordInboxPayload,
  type DiscordStored,
} from './normalize.js';

/** What receiving messages needs of the adapter. */
export interface DiscordReceiveContext {
  token: string;
  clock: Clock;
  logger: Logger;
  inbox: ChannelInbox<DiscordStored>;
  /** This bot's user id, from READY; undefined before the first login. */
  botId: () => string | undefined;
  /** Messages handled at once, not behind their conversation's earlier ones. @default none */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
}

/** The messages of one adapter: their inbox writes and their handling, each channel in arrival order. */
export class DiscordReceiver {
  /** Where messages go; set at start. */
  handler: InboundHandler | undefined;
  private readonly conversations = new ConversationQueue();
  /** Inbox writes, one channel's in arrival order, so a message is stored before the next one of its channel. */
  private readonly storing = new ConversationQueue();

  constructor(private readonly context: DiscordReceiveContext) {}

  /** One live message of `client`: normalized, stored unless a bot sent it, then handled in order. */
  async receive(client: Client, message: Message): Promise<void> {
    const botId = client.user?.id;
    if (!botId || !this.handler) return;
    const refId = message.reference?.messageId;
    // discord.js caches `referenced_message` from the MESSAGE_CREATE payload in the channel.
    const cached = refId ? message.channel.messages.cache.get(refId) : undefined;
    const referenced = cached ? { authorId: cached.author.id, content: cached.content } : undefined;
    const inbound = normalizeDiscordMessage(message, botId, referenced, this.context.clock.now(), (file) =>
      discordAttachment(file),
    );
    if (!inbound) return;
    // Stored before it is handled, unless it will never be acted on (a bot's message).
    const stored = inbound.senderIsBot
      ? Promise.resolve()
      : this.storing.run(message.channelId, () =>
          this.context.inbox.record([
            {
              dedupeKey: inbound.dedupeKey,
              receivedAt: inbound.receivedAt,
              payload: discordInboxPayload(message, referenced),
            },
          ]),
        );
    await this.handleInOrder(inbound, stored);
  }

  /** A stored message again (a process died before handling it, or its handling failed on the database). */
  redeliver(payload: DiscordInboxPayload): Promise<void> {
    const botId = this.context.botId();
    if (!botId || !this.handler) return Promise.resolve();
    const inbound = normalizeDiscordMessage(
      payload.message,
      botId,
      payload.referenced,
      this.context.clock.now(),
      (file) => discordAttachment(file),
    );
    return inbound ? this.handleInOrder(inbound, Promise.resolve()) : this.context.inbox.forget(payload.message.id);
  }

  /**
   * discord.js emits messageCreate without waiting for the listener: one channel (a thread is its
   * own channel) is handled strictly in arrival order. Queued synchronously, so calls made in
   * arrival order are handled in it; the handling waits for the message's inbox write.
   */
  private handleInOrder(inbound: InboundMessage, stored: Promise<void>): Promise<void> {
    const handler = this.handler;
    if (!handler) return Promise.resolve();
    const { logger, token, inbox, overtakes } = this.context;
    const handle = async (): Promise<void> => {
      // Discord never delivers it again: a failed write is logged and the message still handled.
      await stored.catch((err: unknown) =>
        logger.error(
          { channel: 'discord', err: describeDiscordError(err, token) },
          'could not store a discord message; handling it anyway',
        ),
      );
      await inbox.track(inbound.dedupeKey, () => handler(inbound));
    };
    return overtakes?.(inbound) ? handle() : this.conversations.run(inbound.chatId, handle);
  }
}

/** Where {@link listenToDiscord} hands what arrives. */
export interface DiscordListeners {
  token: string;
  logger: Logger;
  receive: (client: Client, message: Message) => Promise<void>;
  press: (interaction: ButtonInteraction) => Promise<void>;
}

/**
 * Messages and button presses of `client`, each handed to `gate` as a thunk that handles it
 * (synchronously queued, so calls in arrival order keep that order); registered before login.
 */
export function listenToDiscord(
  client: Client,
  gate: (deliver: () => void) => void,
  { token, logger, receive, press }: DiscordListeners,
): void {
  client.on(Events.MessageCreate, (message) =>
    gate(() => {
      void receive(client, message).catch((err: unknown) =>
        logger.error({ channel: 'discord', err: describeDiscordError(err, token) }, 'discord message handler failed'),
      );
    }),
  );
  // Component interactions come over the gateway whatever the intents (Discord "Gateway Intents":
  // INTERACTION_CREATE is in no intent), so DISCORD_INTENTS is unchanged.
  client.on(Events.InteractionCreate, (interaction) => {
    if (!interaction.isButton()) return;
    gate(() => {
      void press(interaction).catch((err: unknown) =>
        logger.error(
          { channel: 'discord', err: describeDiscordError(err, token) },
          'discord button press handler failed',
        ),
      );
    });
  });
}
