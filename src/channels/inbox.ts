/**
 * The channel side of the inbox, one mechanism for every channel: a channel
 * stores each raw platform event (a Telegram update, a Slack event envelope, a Discord message)
 * before it confirms it to the platform (Telegram's next `getUpdates` offset, Slack's ack) or, where
 * the platform has no confirmation (Discord), before it handles it. At start the events stored but
 * never claimed (a process died in between) are handed to the channel's own handling again, oldest
 * first; every 10 s this process's claims whose handling failed (a database error) are released and
 * handed out again. The dispatcher's claim by dedupe key keeps a replay from acting twice.
 */
import type { Logger } from '../core/logger.js';
import type { InboundInbox, InboxUpdate, Platform } from './types.js';

/** How often stored events whose handling failed are handed out again, in ms. */
export const INBOX_RETRY_MS = 10_000;

/** Options of a {@link ChannelInbox}. */
export interface ChannelInboxOptions<P> {
  platform: Platform;
  /** The store; without one every method is a no-op (nothing is kept across a crash). */
  inbox: InboundInbox | undefined;
  logger: Logger;
  /**
   * Hands one stored event to the channel's handling again. Called for each event in order
   * without waiting for the previous one to finish, so it must queue by conversation before its
   * first `await` (Telegram's `sequentialize`, {@link ConversationQueue}). Failures are logged.
   */
  redeliver(payload: P): Promise<void>;
  /** Arrival order of two stored events, when the platform's ids say more than the time stored. @default the time stored */
  compare?: (a: P, b: P) => number;
  /**
   * Whether this process may hand stored events out now: false on a fleet standby,
   * where the lease holder handles them in conversation order. @default always
   */
  mayReplay?: () => boolean;
}

/** One channel's view of the inbox; see the module comment. */
export class ChannelInbox<P> {
  /** Dedupe keys being handled now, with how many handlings of each are under way. */
  private readonly inFlight = new Map<string, number>();
  private sweep: NodeJS.Timeout | undefined;

  constructor(private readonly options: ChannelInboxOptions<P>) {}

  /** Whether events are kept across a crash at all. */
  get enabled(): boolean {
    return this.options.inbox !== undefined;
  }

  /**
   * Stores raw events as received (already known dedupe keys are left alone).
   *
   * @throws the store's error (a database outage): the caller must then not confirm the events.
   */
  async record(events: readonly InboxUpdate[]): Promise<void> {
    if (events.length > 0) await this.options.inbox?.recordInbox(this.options.platform, events);
  }

  /** Drops a stored event that will never be acted on. */
  async forget(dedupeKey: string): Promise<void> {
    await this.options.inbox?.forgetInbound(this.options.platform, dedupeKey);
  }

  /** Runs the handling of one event, marking its key in flight so the retry sweep leaves its claim alone. */
  async track<T>(dedupeKey: string, handle: () => Promise<T>): Promise<T> {
    this.inFlight.set(dedupeKey, (this.inFlight.get(dedupeKey) ?? 0) + 1);
    try {
      return await handle();
    } finally {
      const left = (this.inFlight.get(dedupeKey) ?? 1) - 1;
      if (left > 0) this.inFlight.set(dedupeKey, left);
      else this.inFlight.delete(dedupeKey);
    }
  }

  /**
   * Hands the events stored but never claimed to {@link ChannelInboxOptions.redeliver}, oldest
   * first. Call it at start before live events flow, so they queue ahead of anything new.
   *
   * @throws the store's error when the stored events cannot be read.
   */
  async replay(): Promise<void> {
    const { inbox, platform, logger, compare, redeliver } = this.options;
    if (!inbox) return;
    const stored = (await inbox.receivedInbound(platform)).map((s) => s.payload as P);
    if (compare) stored.sort(compare);
    if (stored.length > 0)
      logger.info({ channel: platform, events: stored.length }, 'handling stored events not yet answered');
    for (const payload of stored) {
      void redeliver(payload).catch((err: unknown) =>
        logger.error({ channel: platform, err }, 'stored event handler failed'),
      );
    }
  }

  /**
   * {@link replay}, with a failure logged instead of thrown: the retry sweep replays again within
   * {@link INBOX_RETRY_MS}, so a database blip at start need not fail the channel's start.
   */
  async replaySafely(): Promise<void> {
    await this.replay().catch((err: unknown) =>
      this.options.logger.warn(
        { channel: this.options.platform, err },
        'could not read stored events; retrying within 10 s',
      ),
    );
  }

  /** Every {@link INBOX_RETRY_MS}: releases this process's claims whose handling ended without an answer, and replays. */
  startRetrying(): void {
    const { inbox, platform, logger } = this.options;
    if (!inbox || this.sweep) return;
    this.sweep = setInterval(() => {
      void this.retryFailed().catch((err: unknown) =>
        logger.warn({ channel: platform, err }, 'could not retry stored events; trying again later'),
      );
    }, INBOX_RETRY_MS);
    this.sweep.unref();
  }

  stop(): void {
    if (this.sweep) clearInterval(this.sweep);
    this.sweep = undefined;
  }

  private async retryFailed(): Promise<void> {
    const { inbox, platform, logger } = this.options;
    if (!inbox) return;
    const released = await inbox.releaseOwnClaims(platform, [...this.inFlight.keys()]);
    if (released > 0) logger.info({ channel: platform, events: released }, 'retrying events whose handling failed');
    if (this.options.mayReplay?.() === false) return;
    await this.replay();
  }
}
