/**
 * Sends delivery rows (PRODUCT.md §9). A row is written first, in the transaction of its cause,
 * then attempted once inline; a failure leaves it pending with a backoff for the retry worker, or
 * dead-letters it past the attempt or age cap. Parts already sent are never sent again.
 */
import type { ChannelAdapter, Platform } from '../channels/types.js';
import { ChannelSendError } from '../channels/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { NewDelivery, RunStore } from '../store/runs-repo.js';
import type { DeliveryRow } from '../store/schema.js';
import { splitMessage } from './split.js';

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
   * Attempts one delivery row now, resuming after the parts already sent.
   *
   * @returns true when every part reached the platform. Never throws for a platform failure: the
   *   failure is recorded on the row (retry time or dead letter) and logged.
   */
  async attempt(row: DeliveryRow): Promise<boolean> {
    const { store, clock, logger, adapters } = this.deps;
    const adapter = adapters.get(row.target.platform as Platform);
    if (!adapter) {
      await this.fail(row, `channel ${row.target.platform} is not running`, undefined);
      return false;
    }
    const parts = splitMessage(row.body, adapter.maxMessageLength);
    for (let index = row.partsDelivered; index < parts.length; index++) {
      try {
        const { messageId } = await adapter.send({
          chatId: row.target.chatId,
          ...(row.target.threadId ? { threadId: row.target.threadId } : {}),
          ...(row.target.replyToMessageId ? { replyToMessageId: row.target.replyToMessageId } : {}),
          text: parts[index]!,
        });
        await store.recordPartsSent(row, index + 1, [messageId], index + 1 === parts.length, clock.now());
      } catch (err) {
        const retryAfterMs = err instanceof ChannelSendError ? err.retryAfterMs : undefined;
        logger.warn({ deliveryId: row.id, runId: row.runId, err: describe(err) }, 'delivery attempt failed');
        await this.fail(row, describe(err), retryAfterMs);
        return false;
      }
    }
    return true;
  }

  private async fail(row: DeliveryRow, error: string, retryAfterMs: number | undefined): Promise<void> {
    const { policy, clock } = this.deps;
    const attempts = row.attempts + 1;
    const now = clock.nowMs();
    const delayMs = Math.max(retryAfterMs ?? 0, backoffMs(attempts, policy));
    const dead = attempts >= policy.maxAttempts || now + delayMs - row.createdAt.getTime() > policy.maxAgeMs;
    await this.deps.store.recordAttemptFailed(row.id, error, new Date(now + delayMs), dead);
    if (dead) this.deps.logger.error({ deliveryId: row.id, runId: row.runId, attempts }, 'delivery dead-lettered');
  }
}

function describe(err: unknown): string {
  if (err instanceof ChannelSendError) return `${err.kind}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
