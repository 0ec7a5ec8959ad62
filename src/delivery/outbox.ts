/**
 * Sends delivery rows (PRODUCT.md §9). A row is written first, in the transaction of its cause,
 * then attempted once inline; a failure leaves it pending with a backoff for the retry worker, or
 * dead-letters it past the attempt or age cap. Parts already sent are never sent again.
 */
import type { ChannelAdapter, Platform } from '../channels/types.js';
import { ChannelSendError } from '../channels/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { INLINE_LEASE_MS, type NewDelivery, type RunStore } from '../store/runs-repo.js';
import type { DeliveryRow, ReshapeJson } from '../store/schema.js';
import { resplitFrom, splitMessage } from './split.js';

/** Retry schedule and caps. */
export interface OutboxPolicy {
  /** First retry delay, in ms; doubles per attempt. @default 30_000 */
  backoffBaseMs: number;
  /** Longest retry delay, in ms. @default 1_800_000 (30 min) */
  backoffCapMs: number;
  /** Attempts before a row is dead-lettered. @default 20 */
  maxAttempts: number;
  /** Age after which a row is dead-lettered, in ms. @default 86_400_000 (24 h) */
  maxAgeMs: number;
}

/** Dependencies of the {@link Outbox}. */
export interface OutboxDeps {
  store: RunStore;
  clock: Clock;
  logger: Logger;
  /** Started adapters by platform; a platform missing here leaves its rows pending. */
  adapters: ReadonlyMap<Platform, ChannelAdapter>;
  policy: OutboxPolicy;
}

/** Smallest part length a malformed part is reshaped down to, in UTF-16 units. */
const MIN_RESHAPE_LENGTH = 256;

/**
 * The parts of a delivery as they are (or were) sent: the platform-sized split, then each stored
 * re-split in order, so a retry resumes on the same layout.
 */
export function layoutParts(body: string, maxLength: number, reshapes: readonly ReshapeJson[]): string[] {
  let parts = splitMessage(body, maxLength);
  for (const reshape of reshapes) parts = resplitFrom(parts, reshape.fromPart, reshape.maxLength);
  return parts;
}

/** Backoff before retry number `attempt` (1-based): base·2^(attempt−1), capped. */
export function backoffMs(attempt: number, policy: Pick<OutboxPolicy, 'backoffBaseMs' | 'backoffCapMs'>): number {
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}

/** The outbox sender. */
export class Outbox {
  constructor(private readonly deps: OutboxDeps) {}

  /** Writes a message that no state change caused (a command's answer) and attempts it. */
  async send(delivery: NewDelivery): Promise<DeliveryRow> {
    const row = await this.deps.store.enqueue(delivery, this.deps.clock.now());
    await this.attempt(row);
    return row;
  }

  /**
   * Attempts one delivery row now, resuming after the parts already sent. A run's messages go out
   * in the order they were written: a row waits (stays pending, no attempt counted) while an
   * earlier row of its run is pending, and once a row of a run is delivered or dead-lettered the
   * next pending row of that run is sent at once. Rows of other runs are never held up.
   *
   * @returns true when every part reached the platform. Never throws for a platform failure: the
   *   failure is recorded on the row (retry time or dead letter) and logged.
   */
  attempt(row: DeliveryRow): Promise<boolean> {
    const runId = row.runId;
    if (!runId) return this.attemptNow(row).then((state) => state === 'delivered');
    // In this process, one run's rows are attempted one at a time; across processes the claim
    // in claimInRunOrder decides.
    const previous = this.runQueues.get(runId) ?? Promise.resolve(true);
    const current = previous.catch(() => false).then(() => this.attemptInRunOrder(row));
    this.runQueues.set(runId, current);
    void current.finally(() => {
      if (this.runQueues.get(runId) === current) this.runQueues.delete(runId);
    });
    return current;
  }

  private readonly runQueues = new Map<string, Promise<boolean>>();

  private async attemptInRunOrder(seen: DeliveryRow): Promise<boolean> {
    const { store, clock, logger } = this.deps;
    const row = await store.claimInRunOrder(seen, clock.now(), INLINE_LEASE_MS);
    if (!row) {
      logger.debug({ deliveryId: seen.id, runId: seen.runId }, 'delivery waits for an earlier message of its run (or was taken)');
      return false;
    }
    const state = await this.attemptNow(row);
    if (state !== 'pending') {
      const next = await store.firstPendingOfRun(row.runId!);
      if (next) await this.attemptInRunOrder(next);
    }
    return state === 'delivered';
  }

  private async attemptNow(claimed: DeliveryRow): Promise<'delivered' | 'pending' | 'dead'> {
    let row = claimed;
    let moves = 0;
    const { store, clock, logger, adapters } = this.deps;
    const adapter = adapters.get(row.target.platform as Platform);
    if (!adapter) {
      return this.fail(row, `channel ${row.target.platform} is not running`, undefined);
    }
    let reshapes = row.reshapes;
    let parts = layoutParts(row.body, adapter.maxMessageLength, reshapes);
    for (let index = row.partsDelivered; index < parts.length; index++) {
      try {
        const messageId = await this.sendPart(adapter, row, parts[index]!, index + 1 === parts.length);
        await store.recordPartsSent(row, index + 1, [messageId], index + 1 === parts.length, clock.now());
      } catch (err) {
        // A part the platform refuses as malformed or too long is never retried unchanged: the
        // rest of the message is re-split in halves (down to MIN_RESHAPE_LENGTH) and sent at once,
        // numbered as finally sent.
        const current = reshapes.at(-1)?.maxLength ?? adapter.maxMessageLength;
        const smaller = Math.floor(Math.min(current, parts[index]!.length) / 2);
        if (err instanceof ChannelSendError && err.kind === 'malformed' && smaller >= MIN_RESHAPE_LENGTH) {
          logger.warn({ deliveryId: row.id, part: index + 1, maxLength: smaller }, 'platform refused a part as malformed; re-splitting the rest smaller');
          reshapes = [...reshapes, { fromPart: index, maxLength: smaller }];
          await store.recordReshapes(row.id, reshapes);
          parts = resplitFrom(parts, index, smaller);
          index -= 1;
          continue;
        }
        // The chat moved (group → supergroup): the conversation follows it, and this part goes
        // to the new chat at once.
        if (err instanceof ChannelSendError && err.movedToChatId !== undefined && err.movedToChatId !== row.target.chatId && moves++ < 3) {
          logger.warn({ deliveryId: row.id, from: row.target.chatId, to: err.movedToChatId }, 'chat moved; sending to its new id');
          await store.moveConversation(row.target.platform as Platform, row.target.chatId, err.movedToChatId);
          row = { ...row, target: { ...row.target, chatId: err.movedToChatId } };
          index -= 1;
          continue;
        }
        const retryAfterMs = err instanceof ChannelSendError ? err.retryAfterMs : undefined;
        // A refusal about this message (blocked bot, unknown chat) will not change: dead-letter now.
        const permanent = err instanceof ChannelSendError && !err.retryable;
        logger.warn({ deliveryId: row.id, runId: row.runId, err: describe(err), permanent }, 'delivery attempt failed');
        return this.fail(row, describe(err), retryAfterMs, permanent);
      }
    }
    return 'delivered';
  }

  private async sendPart(adapter: ChannelAdapter, row: DeliveryRow, text: string, last: boolean): Promise<string> {
    const { messageId } = await adapter.send({
      ...(last && row.buttons?.length ? { buttons: row.buttons } : {}),
      chatId: row.target.chatId,
      ...(row.target.threadId ? { threadId: row.target.threadId } : {}),
      ...(row.target.replyToMessageId ? { replyToMessageId: row.target.replyToMessageId } : {}),
      text,
    });
    return messageId;
  }

  /** Records a failed attempt; returns the row's new state. */
  private async fail(row: DeliveryRow, error: string, retryAfterMs: number | undefined, permanent = false): Promise<'pending' | 'dead'> {
    const { policy, clock } = this.deps;
    const attempts = row.attempts + 1;
    const now = clock.nowMs();
    const delayMs = Math.max(retryAfterMs ?? 0, backoffMs(attempts, policy));
    const dead = permanent || attempts >= policy.maxAttempts || now + delayMs - row.createdAt.getTime() > policy.maxAgeMs;
    await this.deps.store.recordAttemptFailed(row.id, error, new Date(now + delayMs), dead);
    if (dead) this.deps.logger.error({ deliveryId: row.id, runId: row.runId, attempts }, 'delivery dead-lettered');
    return dead ? 'dead' : 'pending';
  }
}

function describe(err: unknown): string {
  if (err instanceof ChannelSendError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
