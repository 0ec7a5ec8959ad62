/**
 * Telegram long polling (`getUpdates` through @grammyjs/runner): the inbox write inside each
 * poll, the fleet lease that decides whether this process polls, the channel state, and the
 * restart after the runner gives up (a 409 Conflict or a long outage).
 */
import { run, type RunnerHandle } from '@grammyjs/runner';
import { GrammyError, type Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { telegramPollConflict } from '../../wording/channels.js';
import type { ChannelInbox } from '../inbox.js';
import { leaseStandbyState } from '../lease-standby.js';
import type { ChannelState, ConnectionLease } from '../types.js';
import { describeTelegramError } from './errors.js';
import { telegramDedupeKey } from './normalize.js';

/** What of the adapter's options polling reads. */
export interface TelegramPollingOptions {
  token: string;
  clock: Clock;
  logger: Logger;
  /** Wait before polling again after a 409 Conflict, in ms. @default 60_000 */
  conflictRetryMs?: number | undefined;
  /** The fleet's lease on this token's long poll. @default none (always poll) */
  lease?: ConnectionLease | undefined;
  /** Told once per episode of 409 Conflict while this process holds the lease. @default none */
  onConflict?: ((reason: string) => void) | undefined;
}

/** Wait before polling again after the runner gave up on anything but a conflict, in ms. */
const RESTART_AFTER_FAILURE_MS = 300_000;

/** The long poll of one bot, and the channel state it determines. */
export class TelegramPolling {
  state: ChannelState = { state: 'stopped' };
  /** False while another node holds the fleet's lease on this token (no lease: always true). */
  mayPoll = true;
  private runner: RunnerHandle | undefined;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** A 409 episode was already reported to the owner. */
  private conflictReported = false;

  /** Installs the poll's API middleware on `bot`: the state it reports, then the inbox write. */
  constructor(
    private readonly bot: Bot,
    private readonly inbox: ChannelInbox<Update>,
    private readonly options: TelegramPollingOptions,
  ) {
    bot.api.config.use(async (prev, method, payload, signal) => {
      try {
        const result = await prev(method, payload, signal);
        if (method === 'getUpdates') {
          if (this.state.state === 'reconnecting' || this.state.state === 'failed') this.state = { state: 'connected' };
          this.conflictReported = false;
        }
        return result;
      } catch (err) {
        if (method === 'getUpdates' && !this.stopped && !signal?.aborted) {
          const reason = describeTelegramError(err, options.token);
          this.state = { state: 'reconnecting', reason };
          options.logger.warn({ channel: 'telegram', err: reason }, 'telegram polling failed; retrying');
        }
        throw err;
      }
    });
    // The inbox write sits inside the getUpdates call: the runner computes the next offset only
    // from an answer this returns, so no update is confirmed before it is stored. A failed write
    // fails the poll, and the runner fetches the same updates again.
    bot.api.config.use(async (prev, method, payload, signal) => {
      const response = await prev(method, payload, signal);
      if (method === 'getUpdates' && inbox.enabled && response.ok && bot.isInited()) {
        const botId = bot.botInfo.id;
        const receivedAt = options.clock.now();
        const updates = response.result as unknown as Update[];
        await inbox.record(
          updates.map((u) => ({ dedupeKey: telegramDedupeKey(botId, u.update_id), receivedAt, payload: u })),
        );
      }
      return response;
    });
  }

  /**
   * Polls now, or behind a fleet lease once this node holds it; updates stored but never handled
   * go first. `bot` names the bot in the log line.
   */
  async start(botName: string): Promise<void> {
    const { lease, logger } = this.options;
    if (lease) {
      await this.startBehind(lease);
    } else {
      // Updates stored but never handled (a process died between storing and handling them) go
      // first, through the same sequentializer, so each conversation's order holds.
      await this.inbox.replay();
      this.launchRunner();
    }
    // A handling that failed on a database error (an outage) left its claim: hand it out again.
    this.inbox.startRetrying();
    if (this.mayPoll) {
      this.state = { state: 'connected' };
      logger.info({ channel: 'telegram', bot: botName }, 'telegram connected');
    } else {
      logger.info({ channel: 'telegram', bot: botName }, 'telegram on standby: another node polls this bot');
    }
  }

  /**
   * In a fleet only the lease holder polls (Telegram allows one getUpdates per token); a standby
   * takes over within the lease's expiry after the holder dies, and handles what the dead holder
   * stored but never answered.
   */
  private async startBehind(lease: ConnectionLease): Promise<void> {
    this.mayPoll = false;
    await lease.start({
      onAcquired: async () => {
        this.mayPoll = true;
        this.state = { state: 'connected' };
        await this.inbox.replay();
        if (!this.stopped) this.launchRunner();
      },
      onLost: async (reason) => {
        this.mayPoll = false;
        if (this.restartTimer) clearTimeout(this.restartTimer);
        this.state = { state: 'standby', reason };
        if (this.runner?.isRunning()) await this.runner.stop();
      },
    });
    this.state = leaseStandbyState(lease, 'polls this bot') ?? this.state;
  }

  private launchRunner(): void {
    if (!this.mayPoll) return;
    const runner = run(this.bot, {
      runner: {
        silent: true,
        retryInterval: 'exponential',
        maxRetryTime: 24 * 3600_000,
        fetch: { allowed_updates: ['message', 'callback_query'] },
      },
    });
    this.runner = runner;
    runner.task()?.catch((err: unknown) => this.restartLater(err));
  }

  /** The runner gave up: report it (a conflict to the owner, once an episode) and poll again later. */
  private restartLater(err: unknown): void {
    if (this.stopped) return;
    const conflict = err instanceof GrammyError && err.error_code === 409;
    const retryMs = conflict ? (this.options.conflictRetryMs ?? 60_000) : RESTART_AFTER_FAILURE_MS;
    const reason = conflict ? telegramPollConflict : describeTelegramError(err, this.options.token);
    if (!this.mayPoll) return;
    this.state = { state: 'failed', reason };
    this.options.logger.error({ channel: 'telegram', reason, retryInMs: retryMs }, 'telegram polling stopped');
    if (conflict && !this.conflictReported) {
      this.conflictReported = true;
      this.options.onConflict?.(reason);
    }
    this.restartTimer = setTimeout(() => {
      if (!this.stopped) this.launchRunner();
    }, retryMs);
    this.restartTimer.unref();
  }

  /** Stops polling and the retry sweep, and gives the lease back. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.inbox.stop();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.runner?.isRunning()) await this.runner.stop();
    await this.options.lease?.stop();
    this.state = { state: 'stopped' };
  }
}
