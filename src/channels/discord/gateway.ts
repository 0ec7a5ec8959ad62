/**
 * The Discord gateway session (discord.js `Client`): the fleet lease that decides whether this
 * process connects, the login that waits for READY, the inbox replay before live messages, the
 * channel state, and the new login after a failure. Discord API facts: "Gateway" (intents;
 * close codes 4004 auth failed, 4014 disallowed intents), "Get Gateway Bot" (the gateway URL
 * comes from the REST API).
 */
import { Client, Events, GatewayIntentBits, Partials } from 'discord.js';
import type { Logger } from '../../core/logger.js';
import {
  discordGatewayClosed,
  discordLeaseHolds,
  discordNotReady,
  discordReconnecting,
  discordSessionInvalidated,
  retryingReason,
} from '../../wording/channels.js';
import type { ChannelInbox } from '../inbox.js';
import { leaseStandbyState } from '../lease-standby.js';
import type { ChannelState, ConnectionLease } from '../types.js';
import { classifyDiscordError, describeDiscordError } from './errors.js';
import type { DiscordStored } from './normalize.js';
import { discordRestOptions } from './rest.js';

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

/** What of the adapter's options the gateway reads (see `DiscordAdapterOptions`). */
export interface DiscordGatewayOptions {
  token: string;
  apiUrl?: string | undefined;
  logger: Logger;
  /** Longest wait for READY at start, in ms. @default 30_000 */
  readyTimeoutMs?: number | undefined;
  /** First wait before logging in again, in ms; doubles per failure. @default 60_000 */
  reconnectAfterMs?: number | undefined;
  /** The fleet's lease on this token's gateway session. @default none (always connect) */
  lease?: ConnectionLease | undefined;
}

/** Registers the message and press listeners on a client before login; `gate` holds what arrives early. */
export type DiscordListen = (client: Client, gate: (deliver: () => void) => void) => void;

/** The gateway session of one bot, and the channel state it determines. */
export class DiscordGateway {
  state: ChannelState = { state: 'stopped' };
  /** False while another node holds the fleet's lease on this token (no lease: always true). */
  leaseHeld = true;
  /** This bot's user id, from READY. */
  botId: string | undefined;
  private client: Client | undefined;
  /** The last wait before a new login, in ms; unset while connected. */
  private reconnectWaitMs: number | undefined;
  private stopped = false;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: DiscordGatewayOptions,
    private readonly inbox: ChannelInbox<DiscordStored>,
    private readonly listen: DiscordListen,
  ) {}

  /**
   * Logs in (REST `/gateway/bot`, then IDENTIFY) and resolves once discord.js is ready; behind a
   * lease, logs in only once the lease is held and resolves at once.
   *
   * @throws ChannelSendError when the token is refused, an intent is not enabled or Discord is unreachable.
   */
  async start(): Promise<void> {
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
          await client?.destroy().catch((err: unknown) => this.destroyFailed(err));
        },
      });
      this.state = leaseStandbyState(lease, discordLeaseHolds) ?? this.state;
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

  /** Closes the session, stops the inbox's retry sweep and gives the lease back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.inbox.stop();
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    this.state = { state: 'stopped' };
    // The lease goes back even when discord.js fails to close: kept, it would hold the token away
    // from every other node until its TTL ran out.
    try {
      await client?.destroy();
    } finally {
      await this.options.lease?.stop();
    }
  }

  private async connect(): Promise<void> {
    const client = new Client({
      intents: DISCORD_INTENTS,
      partials: [Partials.Channel],
      rest: discordRestOptions(this.options.apiUrl),
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
    await this.login(client);
    if (!this.leaseHeld || this.stopped) {
      // The lease was lost (or the service stopped) while logging in: the node that holds it now
      // has its own session, which Discord dispatches the same messages to.
      await client.destroy().catch((err: unknown) => this.destroyFailed(err));
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

  /** Logs `client` in and waits for READY, at most `readyTimeoutMs`; a failed client is destroyed. */
  private async login(client: Client): Promise<void> {
    const ready = new Promise<void>((resolve, reject) => {
      client.once(Events.ClientReady, () => resolve());
      client.once(Events.ShardDisconnect, (event) => reject(new Error(discordGatewayClosed(event.code))));
    });
    ready.catch(() => undefined); // settled late or never awaited when login itself fails
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = this.options.readyTimeoutMs ?? 30_000;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(discordNotReady(timeoutMs))), timeoutMs);
    });
    try {
      await Promise.race([client.login(this.options.token).then(() => ready), timeout]);
    } catch (err) {
      await client.destroy().catch((destroyErr: unknown) => this.destroyFailed(destroyErr));
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The connection state events of a client that is ready and replayed. */
  private watch(client: Client): void {
    const { logger, token } = this.options;
    const current = (): boolean => this.client === client && !this.stopped;
    client.on(Events.ShardReconnecting, () => {
      if (current()) this.state = { state: 'reconnecting', reason: discordReconnecting };
    });
    client.on(Events.ShardResume, () => {
      if (current()) this.state = { state: 'connected' };
    });
    client.on(Events.ShardReady, () => {
      if (current()) this.state = { state: 'connected' };
    });
    client.on(Events.ShardDisconnect, (event) => {
      if (current()) this.scheduleReconnect(discordGatewayClosed(event.code));
    });
    client.on(Events.Invalidated, () => {
      if (current()) this.scheduleReconnect(discordSessionInvalidated);
    });
    client.on(Events.ShardError, (err) =>
      logger.warn({ channel: 'discord', err: describeDiscordError(err, token) }, 'discord gateway error'),
    );
    client.on(Events.Warn, (text) => logger.warn({ channel: 'discord' }, describeDiscordError(text, token)));
    client.on(Events.Error, (err) =>
      logger.error({ channel: 'discord', err: describeDiscordError(err, token) }, 'discord client error'),
    );
  }

  /**
   * A client being dropped failed to close. Nothing waits on it any more (its session is already
   * replaced or given up), so the failure is logged rather than thrown.
   */
  private destroyFailed(err: unknown): void {
    const { logger, token } = this.options;
    logger.warn({ channel: 'discord', err: describeDiscordError(err, token) }, 'discord client did not close');
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
    this.state = { state: 'failed', reason: retryingReason(reason, waitMs) };
    logger.error({ channel: 'discord', reason, retryInMs: waitMs }, 'discord gateway closed');
    const old = this.client;
    this.client = undefined;
    void old?.destroy().catch((err: unknown) => this.destroyFailed(err));
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
