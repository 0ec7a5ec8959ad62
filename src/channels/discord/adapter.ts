/**
 * The Discord channel: the discord.js gateway client for direct messages and guild mentions,
 * REST replies that reference the request with every mention suppressed. Discord API facts:
 * "Gateway" (intents; MESSAGE_CREATE; close codes 4004 auth failed, 4014 disallowed intents),
 * "Get Gateway Bot" (the gateway URL comes from the REST API), "Create Message" (`content` up to
 * 2000 characters, `message_reference`, `allowed_mentions`, flag SUPPRESS_EMBEDS).
 *
 * The adapter composes the operations, each in its own file: gateway.ts (the session, the fleet
 * lease, reconnection), receive.ts (messages), presses.ts (button presses), send.ts (send and
 * edit), buttons.ts (message components), files.ts (files in and out) and rest.ts (the REST
 * client's rate-limit options).
 */
import { REST } from 'discord.js';
import type { AdapterBaseOptions } from '../factory.js';
import { ChannelInbox } from '../inbox.js';
import type {
  ChannelAdapter,
  ChannelState,
  ConnectionLease,
  InboundHandler,
  MessageEdit,
  OutboundDocument,
  OutboundMessage,
} from '../types.js';
import { sendDiscordDocument } from './files.js';
import { DiscordGateway } from './gateway.js';
import { compareDiscordPayloads, type DiscordStored } from './normalize.js';
import { handleDiscordPress, receiveDiscordPress, type DiscordPressContext } from './presses.js';
import { DiscordReceiver, listenToDiscord } from './receive.js';
import { discordRestOptions } from './rest.js';
import { DISCORD_MAX_MESSAGE_LENGTH, editDiscordMessage, sendDiscordMessage, type DiscordSendContext } from './send.js';

export { DISCORD_CUSTOM_ID_MAX, DISCORD_CUSTOM_ID_PREFIX, discordComponents, parseDiscordCustomId } from './buttons.js';
export { DISCORD_MAX_FILE_BYTES } from './files.js';
export { DISCORD_INTENTS } from './gateway.js';
export { DISCORD_MAX_MESSAGE_LENGTH } from './send.js';

/**
 * Options of the {@link DiscordAdapter}. The inbox keeps each message meant for baton as it
 * arrives, before it is handled, and messages left unhandled by a process that died are found
 * there when the gateway is ready. Discord has no acknowledgement: a message the process never
 * received (it was down, or died before the store) is not redelivered by a new gateway session.
 */
export interface DiscordAdapterOptions extends AdapterBaseOptions {
  token: string;
  /** REST API base (the gateway URL is then read from its `/gateway/bot`). @default https://discord.com/api */
  apiUrl?: string | undefined;
  /** Longest wait for READY at start, in ms. @default 30_000 */
  readyTimeoutMs?: number;
  /**
   * First wait before logging in again after a login failed or the gateway gave up (e.g. close
   * code 4014), in ms; doubles per failure up to 30 minutes and starts over once connected.
   * @default 60_000 (as a channel that fails to start, src/channels/start.ts)
   */
  reconnectAfterMs?: number;
  /**
   * The fleet's lease on this bot token's gateway session: a second session would
   * receive every message again, so only the holder connects; others stand by and still send
   * through REST. @default none (always connect)
   */
  lease?: ConnectionLease | undefined;
}

/** Discord via discord.js. */
export class DiscordAdapter implements ChannelAdapter {
  readonly platform = 'discord' as const;
  readonly maxMessageLength = DISCORD_MAX_MESSAGE_LENGTH;
  private readonly sending: DiscordSendContext;
  private readonly pressing: DiscordPressContext;
  private readonly receiver: DiscordReceiver;
  private readonly gateway: DiscordGateway;

  constructor(options: DiscordAdapterOptions) {
    const { token, clock, logger } = options;
    const rest = new REST({ ...discordRestOptions(options.apiUrl) }).setToken(token);
    this.sending = { rest, token };
    const inbox = new ChannelInbox<DiscordStored>({
      platform: 'discord',
      inbox: options.inbox,
      logger,
      redeliver: (payload) =>
        'press' in payload ? handleDiscordPress(this.pressing, payload.press) : this.receiver.redeliver(payload),
      compare: compareDiscordPayloads,
      mayReplay: () => this.gateway.leaseHeld,
    });
    this.pressing = { rest, token, clock, logger, inbox, presses: options.presses };
    this.receiver = new DiscordReceiver({
      token,
      clock,
      logger,
      inbox,
      botId: () => this.gateway.botId,
      overtakes: options.overtakes,
    });
    this.gateway = new DiscordGateway(options, inbox, (client, gate) =>
      listenToDiscord(client, gate, {
        token,
        logger,
        receive: (from, message) => this.receiver.receive(from, message),
        press: (interaction) => receiveDiscordPress(this.pressing, interaction),
      }),
    );
  }

  /**
   * Logs in and resolves once discord.js is ready; see {@link DiscordGateway.start}.
   *
   * @throws ChannelSendError when the token is refused, an intent is not enabled or Discord is unreachable.
   */
  async start(handler: InboundHandler): Promise<void> {
    this.receiver.handler = handler;
    await this.gateway.start();
  }

  async stop(): Promise<void> {
    await this.gateway.stop();
  }

  /** Creates one message replying to the request; see {@link sendDiscordMessage}. */
  send(message: OutboundMessage): Promise<{ messageId: string }> {
    return sendDiscordMessage(this.sending, message);
  }

  /** Creates one message carrying a file; see {@link sendDiscordDocument}. */
  sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    return sendDiscordDocument(this.sending, document);
  }

  /** Edits a message the bot sent; see {@link editDiscordMessage}. */
  editMessage(edit: MessageEdit): Promise<void> {
    return editDiscordMessage(this.sending, edit);
  }

  status(): ChannelState {
    return this.gateway.state;
  }
}
