/**
 * The Discord channel: the discord.js gateway client for direct messages and guild mentions,
 * REST replies that reference the request with every mention suppressed. Discord API facts:
 * "Gateway" (intents; MESSAGE_CREATE; close codes 4004 auth failed, 4014 disallowed intents),
 * "Get Gateway Bot" (the gateway URL comes from the REST API), "Create Message" (`content` up to
 * 2000 characters, `message_reference`, `allowed_mentions`, flag SUPPRESS_EMBEDS).
 */
import {
  ButtonStyle,
  Client,
  ComponentType,
  Events,
  GatewayIntentBits,
  MessageFlags,
  Partials,
  REST,
  Routes,
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIMessage,
  type ButtonInteraction,
  type Message,
  type RESTPatchAPIChannelMessageJSONBody,
  type RESTPostAPIChannelMessageJSONBody,
} from 'discord.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { ConversationQueue } from '../conversation-queue.js';
import { fetchDownload } from '../download.js';
import { ChannelInbox } from '../inbox.js';
import {
  ChannelSendError,
  type ChannelAdapter,
  type ChannelState,
  type ConnectionLease,
  type IncomingAttachment,
  type InboundHandler,
  type InboundInbox,
  type InboundMessage,
  type MessageEdit,
  type OutboundDocument,
  type OutboundMessage,
  type PressHandler,
} from '../types.js';
import type { ButtonJson } from '../../core/buttons.js';
import { classifyDiscordError, describeDiscordError, gatewayCloseReason } from './errors.js';
import {
  DISCORD_PASTE_FILE_NAME,
  compareDiscordPayloads,
  discordInboxPayload,
  normalizeDiscordMessage,
  type DiscordAttachmentLike,
  type DiscordInboxPayload,
  type DiscordPressPayload,
  type DiscordStored,
} from './normalize.js';

/**
 * Largest file a bot attaches, in bytes: Discord's default upload limit is 10 MiB per file where
 * the server has no boosts (discord.com/developers/docs/reference "Uploading Files"; the whole
 * request may be at most 25 MiB).
 */
export const DISCORD_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** Longest `content` of one message, in characters ("Create Message": max 2000). */
export const DISCORD_MAX_MESSAGE_LENGTH = 2000;
/** Rate-limit waits up to this long are absorbed by @discordjs/rest; longer ones go back to the outbox, in ms. */
const INLINE_RATE_LIMIT_WAIT_MS = 5_000;

/**
 * Gateway intents. DirectMessages, GuildMessages and MessageContent (privileged: enable "Message
 * Content Intent" in the Developer Portal), which reading commands needs; Guilds too, because discord.js
 * caches a guild's channels from GUILD_CREATE and drops guild messages whose channel it cannot
 * resolve.
 */
export const DISCORD_INTENTS = [
  GatewayIntentBits.Guilds,
  GatewayIntentBits.GuildMessages,
  GatewayIntentBits.DirectMessages,
  GatewayIntentBits.MessageContent,
];

/** First wait before a new login after a failure, in ms (a channel that fails to start: 60 s). */
const DISCORD_FIRST_RETRY_MS = 60_000;
/** Longest wait between logins, in ms. */
const DISCORD_MAX_RETRY_MS = 1_800_000;

/** Options of the {@link DiscordAdapter}. */
export interface DiscordAdapterOptions {
  token: string;
  /** REST API base (the gateway URL is then read from its `/gateway/bot`). @default https://discord.com/api */
  apiUrl?: string | undefined;
  clock: Clock;
  logger: Logger;
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
  /**
   * Where each message meant for baton is stored as it arrives, before it is handled, and where
   * messages left unhandled by a process that died are found when the gateway is ready. Discord
   * has no acknowledgement: a message the process never received (it was down, or died before the
   * store) is not redelivered by a new gateway session. @default none
   */
  inbox?: InboundInbox | undefined;
  /** Where presses of baton's message-component buttons go. @default none: a press is answered "no longer does anything" */
  presses?: PressHandler | undefined;
  /**
   * Messages handled at once, not behind their conversation's earlier ones still being handled
   * (`/stop`, `/cancel` while a launch downloads its files). @default none
   */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
}

/** Longest wait for a press's inbox write before it is acknowledged anyway, in ms (Discord allows 3 s). */
const PRESS_STORE_WAIT_MS = 1_000;

/** Prefix of the `custom_id` of every baton button: `baton:<action>:<arg>`. */
export const DISCORD_CUSTOM_ID_PREFIX = 'baton:';
/** Longest `custom_id` of a component, in characters (Discord "Message Components": 1-100). */
export const DISCORD_CUSTOM_ID_MAX = 100;
/** Most buttons in one action row (Discord "Action Row": up to 5). */
const DISCORD_ROW_MAX = 5;

/** Discord via discord.js. */
export class DiscordAdapter implements ChannelAdapter {
  readonly platform = 'discord' as const;
  readonly maxMessageLength = DISCORD_MAX_MESSAGE_LENGTH;
  private readonly rest: REST;
  private client: Client | undefined;
  private handler: InboundHandler | undefined;
  private state: ChannelState = { state: 'stopped' };
  /** The last wait before a new login, in ms; unset while connected. */
  private reconnectWaitMs: number | undefined;
  private readonly conversations = new ConversationQueue();
  /** Inbox writes, one channel's in arrival order, so a message is stored before the next one of its channel. */
  private readonly storing = new ConversationQueue();
  private readonly inbox: ChannelInbox<DiscordStored>;
  /** This bot's user id, from READY. */
  private botId: string | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;
  /** False while another node holds the fleet's lease on this token (no lease: always true). */
  private leaseHeld = true;

  constructor(private readonly options: DiscordAdapterOptions) {
    this.rest = new REST({ ...this.restOptions() }).setToken(options.token);
    this.inbox = new ChannelInbox<DiscordStored>({
      platform: 'discord',
      inbox: options.inbox,
      logger: options.logger,
      redeliver: (payload) => this.redeliver(payload),
      compare: compareDiscordPayloads,
      mayReplay: () => this.leaseHeld,
    });
  }

  /**
   * Logs in (REST `/gateway/bot`, then IDENTIFY) and resolves once discord.js is ready.
   *
   * @throws ChannelSendError when the token is refused, an intent is not enabled or Discord is unreachable.
   */
  async start(handler: InboundHandler): Promise<void> {
    this.handler = handler;
    this.stopped = false;
    const lease = this.options.lease;
    if (lease) {
      this.leaseHeld = false;
      await lease.start({
        onAcquired: async () => {
          this.leaseHeld = true;
          if (this.stopped) return;
          await this.connect().catch((err: unknown) =>
            this.scheduleReconnect(classifyDiscordError(err, 'login', this.options.token).message),
          );
        },
        onLost: async (reason) => {
          this.leaseHeld = false;
          if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
          this.reconnectTimer = undefined;
          const client = this.client;
          this.client = undefined;
          this.state = { state: 'standby', reason };
          await client?.destroy().catch(() => undefined);
        },
      });
      const held = lease.state();
      if (held.state !== 'holding') {
        this.state = {
          state: 'standby',
          reason:
            held.state === 'standby'
              ? `node ${held.holder} holds this bot's gateway session; this node takes over if it stops`
              : `waiting for the fleet lease: ${held.reason}`,
        };
      }
      return;
    }
    try {
      await this.connect();
    } catch (err) {
      const failure = classifyDiscordError(err, 'login', this.options.token);
      this.state = { state: 'failed', reason: failure.message };
      throw failure;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.inbox.stop();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    this.state = { state: 'stopped' };
    await client?.destroy();
    await this.options.lease?.stop();
  }

  /** Creates one message replying to the request; no mention in it can ping anyone. */
  async send(message: OutboundMessage): Promise<{ messageId: string }> {
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
      const sent = (await this.rest.post(Routes.channelMessages(message.chatId), { body })) as APIMessage;
      return { messageId: sent.id };
    } catch (err) {
      throw classifyDiscordError(err, 'create message', this.options.token);
    }
  }

  /**
   * Creates one message carrying a file (multipart/form-data: `payload_json` and `files[0]`, as
   * @discordjs/rest builds it), replying to the request, the caption as its content.
   *
   * @throws ChannelSendError `refused` for a file over {@link DISCORD_MAX_FILE_BYTES} (not sent),
   *   else as {@link send}.
   */
  async sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
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
      const sent = (await this.rest.post(Routes.channelMessages(document.chatId), {
        body,
        files: [{ name: document.filename, data: document.content }],
      })) as APIMessage;
      return { messageId: sent.id };
    } catch (err) {
      throw classifyDiscordError(err, 'create message', this.options.token);
    }
  }

  /**
   * Edits a message the bot sent (`PATCH /channels/{channel}/messages/{message}`, Discord "Edit
   * Message"), through the same @discordjs/rest client as sends, so its rate-limit buckets are
   * shared. Discord accepts unchanged content. No mention in the text can ping anyone.
   */
  async editMessage(edit: MessageEdit): Promise<void> {
    // `components` always sent: an edit without buttons removes them (Discord keeps them otherwise).
    const body: RESTPatchAPIChannelMessageJSONBody = {
      content: edit.text,
      allowed_mentions: { parse: [] },
      components: edit.buttons?.length ? discordComponents(edit.buttons) : [],
    };
    try {
      await this.rest.patch(Routes.channelMessage(edit.chatId, edit.messageId), { body });
    } catch (err) {
      throw classifyDiscordError(err, 'edit message', this.options.token);
    }
  }

  status(): ChannelState {
    return this.state;
  }

  private restOptions(): {
    api?: string;
    rejectOnRateLimit: (data: { retryAfter: number; timeToReset: number }) => boolean;
  } {
    return {
      ...(this.options.apiUrl ? { api: this.options.apiUrl } : {}),
      rejectOnRateLimit: (data) => Math.max(data.retryAfter, data.timeToReset) > INLINE_RATE_LIMIT_WAIT_MS,
    };
  }

  private async connect(): Promise<void> {
    const client = new Client({
      intents: DISCORD_INTENTS,
      partials: [Partials.Channel],
      rest: this.restOptions(),
      allowedMentions: { parse: [] },
    });
    // Discord dispatches MESSAGE_CREATE right after READY, and discord.js emits the events it
    // queued before READY one per setImmediate after `ready`: listening only once logged in (after
    // the inbox replay, a database round trip) would drop a message sent as the session opens —
    // e.g. the first one after a fleet takeover. So the listeners go on before login and hold what
    // arrives until the stored messages have been replayed, then hand it on in arrival order.
    const early: (() => void)[] = [];
    let live = false;
    this.listen(client, (deliver) => (live ? deliver() : early.push(deliver)));
    const ready = new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      client.once(Events.ShardDisconnect, (event) => reject(new Error(gatewayCloseReason(event.code))));
    });
    ready.catch(() => undefined); // settled late or never awaited when login itself fails
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.readyTimeoutMs ?? 30_000;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`Discord gateway not ready within ${Math.round(timeoutMs / 1000)}s`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([client.login(this.options.token).then(() => ready), timeout]);
    } catch (err) {
      await client.destroy().catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
    }
    if (!this.leaseHeld || this.stopped) {
      // The lease was lost (or the service stopped) while logging in: the node that holds it now
      // has its own session, which Discord dispatches the same messages to.
      await client.destroy().catch(() => undefined);
      return;
    }
    this.botId = client.user?.id;
    // Messages stored by a process that died before handling them go first.
    await this.inbox.replaySafely();
    this.watch(client);
    this.client = client;
    live = true;
    for (const deliver of early.splice(0)) deliver();
    this.inbox.startRetrying();
    this.state = { state: 'connected' };
    this.reconnectWaitMs = undefined;
    this.options.logger.info({ channel: 'discord', bot: client.user?.tag }, 'discord connected');
  }

  /**
   * One press of a baton button: stored in the inbox (waited for 1 s at most, so a stalled
   * database cannot make it miss Discord's 3 s), acknowledged with `deferUpdate` (interaction
   * callback type 6), then, once stored, handed to
   * {@link handlePress}. A press stored by a process that died before acting on it is replayed at
   * the next start, like a message; the dispatcher's claim by dedupe key (the interaction id)
   * keeps a press from acting twice.
   */
  private async press(interaction: ButtonInteraction): Promise<void> {
    const { logger, clock } = this.options;
    const stored: DiscordPressPayload = {
      press: {
        id: interaction.id,
        applicationId: interaction.applicationId,
        token: interaction.token,
        channelId: interaction.channelId,
        guildId: interaction.guildId,
        messageId: interaction.message.id,
        userId: interaction.user.id,
        customId: interaction.customId,
      },
    };
    // Discord never delivers the interaction again: a failed write is logged and the press still handled.
    const recorded = parseDiscordCustomId(interaction.customId)
      ? this.inbox
          .record([{ dedupeKey: interaction.id, receivedAt: clock.now(), payload: stored }])
          .catch((err: unknown) =>
            logger.error(
              { channel: 'discord', err: describeDiscordError(err, this.options.token) },
              'could not store a discord button press; handling it anyway',
            ),
          )
      : Promise.resolve();
    // The acknowledgement is due within Discord's 3 s whatever the database does: the write is
    // waited for PRESS_STORE_WAIT_MS at most; the press is acted on once the database answers.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([recorded, new Promise<void>((resolve) => (timer = setTimeout(resolve, PRESS_STORE_WAIT_MS)))]);
    clearTimeout(timer);
    // A failed acknowledgement (the 3 s passed, or this interaction was acknowledged already) is
    // logged and the press still handed on: the dispatcher's claim keeps a duplicate from acting.
    await interaction
      .deferUpdate()
      .catch((err: unknown) =>
        logger.info(
          { channel: 'discord', err: describeDiscordError(err, this.options.token) },
          'could not acknowledge a button press',
        ),
      );
    await recorded;
    await this.handlePress(stored.press);
  }

  /**
   * A press, live or replayed, normalized and handed to the press handler; the answer is an
   * ephemeral follow-up (`POST /webhooks/{application}/{token}`, flag EPHEMERAL) only the presser
   * sees, sent through REST with the interaction's token, so a replayed press is answered too
   * while its token is valid.
   */
  private async handlePress(press: DiscordPressPayload['press']): Promise<void> {
    const { logger, clock } = this.options;
    let answered = false;
    const answer = async (text: string): Promise<void> => {
      if (answered) return;
      answered = true;
      await this.rest
        .post(Routes.webhook(press.applicationId, press.token), {
          body: {
            content: text.slice(0, DISCORD_MAX_MESSAGE_LENGTH),
            flags: MessageFlags.Ephemeral,
            allowed_mentions: { parse: [] },
          },
          auth: false,
        })
        .catch((err: unknown) =>
          logger.info(
            { channel: 'discord', err: describeDiscordError(err, this.options.token) },
            'could not answer a button press',
          ),
        );
    };
    const parsed = parseDiscordCustomId(press.customId);
    const presses = this.options.presses;
    if (!parsed || !presses) {
      await this.inbox.forget(press.id);
      await answer('This button no longer does anything.');
      return;
    }
    await this.inbox.track(press.id, () =>
      presses({
        platform: 'discord',
        dedupeKey: press.id,
        chatId: press.channelId,
        messageId: press.messageId,
        senderId: press.userId,
        isDirect: press.guildId === null,
        action: parsed.action,
        arg: parsed.arg,
        receivedAt: clock.now(),
        answer,
      }),
    );
  }

  /**
   * Messages and button presses of `client`, each handed to `gate` as a thunk that handles it
   * (synchronously queued, so calls in arrival order keep that order); registered before login.
   */
  private listen(client: Client, gate: (deliver: () => void) => void): void {
    const { logger } = this.options;
    client.on(Events.MessageCreate, (message) =>
      gate(() => {
        void this.receive(client, message).catch((err: unknown) =>
          logger.error(
            { channel: 'discord', err: describeDiscordError(err, this.options.token) },
            'discord message handler failed',
          ),
        );
      }),
    );
    // Component interactions come over the gateway whatever the intents (Discord "Gateway Intents":
    // INTERACTION_CREATE is in no intent), so DISCORD_INTENTS is unchanged.
    client.on(Events.InteractionCreate, (interaction) => {
      if (!interaction.isButton()) return;
      gate(() => {
        void this.press(interaction).catch((err: unknown) =>
          logger.error(
            { channel: 'discord', err: describeDiscordError(err, this.options.token) },
            'discord button press handler failed',
          ),
        );
      });
    });
  }

  /** The connection state events of a client that is ready and replayed. */
  private watch(client: Client): void {
    const { logger } = this.options;
    const current = (): boolean => this.client === client && !this.stopped;
    client.on(Events.ShardReconnecting, () => {
      if (current()) this.state = { state: 'reconnecting', reason: 'gateway connection lost; reconnecting' };
    });
    client.on(Events.ShardResume, () => {
      if (current()) this.state = { state: 'connected' };
    });
    client.on(Events.ShardReady, () => {
      if (current()) this.state = { state: 'connected' };
    });
    client.on(Events.ShardDisconnect, (event) => {
      if (current()) this.scheduleReconnect(gatewayCloseReason(event.code));
    });
    client.on(Events.Invalidated, () => {
      if (current()) this.scheduleReconnect('gateway session invalidated');
    });
    client.on(Events.ShardError, (err) =>
      logger.warn({ channel: 'discord', err: describeDiscordError(err, this.options.token) }, 'discord gateway error'),
    );
    client.on(Events.Warn, (text) =>
      logger.warn({ channel: 'discord' }, describeDiscordError(text, this.options.token)),
    );
    client.on(Events.Error, (err) =>
      logger.error({ channel: 'discord', err: describeDiscordError(err, this.options.token) }, 'discord client error'),
    );
  }

  private async receive(client: Client, message: Message): Promise<void> {
    const botId = client.user?.id;
    if (!botId || !this.handler) return;
    const refId = message.reference?.messageId;
    // discord.js caches `referenced_message` from the MESSAGE_CREATE payload in the channel.
    const cached = refId ? message.channel.messages.cache.get(refId) : undefined;
    const referenced = cached ? { authorId: cached.author.id, content: cached.content } : undefined;
    const inbound = normalizeDiscordMessage(message, botId, referenced, this.options.clock.now(), (file) =>
      discordAttachment(file),
    );
    if (!inbound) return;
    // Stored before it is handled, unless it will never be acted on (a bot's message).
    const stored = inbound.senderIsBot
      ? Promise.resolve()
      : this.storing.run(message.channelId, () =>
          this.inbox.record([
            {
              dedupeKey: inbound.dedupeKey,
              receivedAt: inbound.receivedAt,
              payload: discordInboxPayload(message, referenced),
            },
          ]),
        );
    await this.handleInOrder(inbound, stored);
  }

  /** A stored message or press again (a process died before handling it, or its handling failed on the database). */
  private redeliver(payload: DiscordStored): Promise<void> {
    if ('press' in payload) return this.handlePress(payload.press);
    const botId = this.botId;
    if (!botId || !this.handler) return Promise.resolve();
    const inbound = normalizeDiscordMessage(
      payload.message,
      botId,
      payload.referenced,
      this.options.clock.now(),
      (file) => discordAttachment(file),
    );
    return inbound ? this.handleInOrder(inbound, Promise.resolve()) : this.inbox.forget(payload.message.id);
  }

  /**
   * discord.js emits messageCreate without waiting for the listener: one channel (a thread is its
   * own channel) is handled strictly in arrival order. Queued synchronously, so calls made in
   * arrival order are handled in it; the handling waits for the message's inbox write.
   */
  private handleInOrder(inbound: InboundMessage, stored: Promise<void>): Promise<void> {
    const handler = this.handler;
    if (!handler) return Promise.resolve();
    const handle = async (): Promise<void> => {
      // Discord never delivers it again: a failed write is logged and the message still handled.
      await stored.catch((err: unknown) =>
        this.options.logger.error(
          { channel: 'discord', err: describeDiscordError(err, this.options.token) },
          'could not store a discord message; handling it anyway',
        ),
      );
      await this.inbox.track(inbound.dedupeKey, () => handler(inbound));
    };
    return this.options.overtakes?.(inbound) ? handle() : this.conversations.run(inbound.chatId, handle);
  }

  /**
   * A login failed or the gateway gave up on this session: report it (the state's reason says when
   * the next login is) and log in again later, waiting twice as long after each failure.
   */
  private scheduleReconnect(reason: string): void {
    const { logger } = this.options;
    if (this.reconnectTimer || this.stopped) {
      this.state = { state: 'failed', reason };
      return;
    }
    const first = this.options.reconnectAfterMs ?? DISCORD_FIRST_RETRY_MS;
    const waitMs =
      this.reconnectWaitMs === undefined ? first : Math.min(this.reconnectWaitMs * 2, DISCORD_MAX_RETRY_MS);
    this.reconnectWaitMs = waitMs;
    this.state = { state: 'failed', reason: `${reason} (retrying in ${Math.round(waitMs / 1000)}s)` };
    logger.error({ channel: 'discord', reason, retryInMs: waitMs }, 'discord gateway closed');
    const old = this.client;
    this.client = undefined;
    void old?.destroy().catch(() => undefined);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      if (this.stopped || !this.leaseHeld) return;
      this.connect().catch((err: unknown) =>
        this.scheduleReconnect(classifyDiscordError(err, 'login', this.options.token).message),
      );
    }, waitMs);
    this.reconnectTimer.unref();
  }
}

/**
 * A Discord attachment, downloaded only when the dispatcher asks: a GET of its CDN URL (signed by
 * Discord; no bot token is sent). discord.js has no download helper.
 */
function discordAttachment(file: DiscordAttachmentLike): IncomingAttachment {
  return {
    name: file.name,
    sizeBytes: file.size,
    ...(file.name === DISCORD_PASTE_FILE_NAME ? { pastedText: true } : {}),
    // A signed CDN link expires (about a day): then Discord answers 404, which is not retried.
    open: (signal) => fetchDownload(file.url, signal ? { signal } : {}, 'Discord'),
  };
}

/**
 * Message components for baton's buttons: action rows (type 1) of up to 5 buttons (type 2), style
 * danger for Stop and Deny, secondary otherwise, `custom_id` `baton:<action>:<arg>`.
 *
 * @throws ChannelSendError `malformed` when a `custom_id` is over 100 characters.
 */
export function discordComponents(
  buttons: readonly ButtonJson[],
): APIActionRowComponent<APIButtonComponentWithCustomId>[] {
  const rows: APIActionRowComponent<APIButtonComponentWithCustomId>[] = [];
  buttons.forEach((button, index) => {
    const customId = `${DISCORD_CUSTOM_ID_PREFIX}${button.action}:${button.arg}`;
    if (customId.length > DISCORD_CUSTOM_ID_MAX)
      throw new ChannelSendError(
        'malformed',
        `Discord custom_id is over ${DISCORD_CUSTOM_ID_MAX} characters: ${customId}`,
      );
    if (index % DISCORD_ROW_MAX === 0) rows.push({ type: ComponentType.ActionRow, components: [] });
    rows.at(-1)!.components.push({
      type: ComponentType.Button,
      custom_id: customId,
      label: button.label,
      style: button.action === 'stop' || button.action === 'deny' ? ButtonStyle.Danger : ButtonStyle.Secondary,
    });
  });
  return rows;
}

/** Reads `baton:<action>:<arg>` back; undefined for a custom_id baton did not write. */
export function parseDiscordCustomId(customId: string): { action: string; arg: string } | undefined {
  const match = /^baton:([a-z_]+):(.+)$/.exec(customId);
  return match ? { action: match[1]!, arg: match[2]! } : undefined;
}
