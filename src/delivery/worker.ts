/**
 * The retry worker: every tick it claims due pending deliveries and attempts each
 * through the {@link Outbox}. Claims skip rows another process holds, so several service
 * processes on one database never send a row at the same time.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
import type { DeliveryRow } from '../store/schema.js';
import type { Outbox } from './outbox.js';

/** Options of {@link startDeliveryWorker}. */
export interface DeliveryWorkerOptions {
  store: RunStore;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  /** Time between ticks, in ms. @default 30_000 */
  tickMs?: number;
  /** Rows claimed per tick. @default 50 */
  batchSize?: number;
  /** How long a claim keeps other processes off a row, in ms. @default 300_000 */
  leaseMs?: number;
  /** Rows sent at once; a run's own messages still go in order (the outbox queues them). @default 8 */
  concurrency?: number;
}

/** A running worker; `stop()` waits for the tick in progress. */
export interface DeliveryWorker {
  /** Claims one batch now and attempts its rows; resolves with the number of rows attempted. */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts the worker; the first pass runs at once (pending rows from before a restart).
 *
 * A pass claims a batch and sends it on `concurrency` lanes. While a backlog lasts (each claim
 * came back full) the next batch is claimed as soon as the rows not yet started are fewer than
 * the lanes, so a lane never waits for a claim, nor for the slowest row of its batch (with a claim after each whole batch, the lanes stood idle through every claim and every
 * batch's slowest send). A claimed row waits at most for the rows claimed before it to start.
 */
export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { store, outbox, clock, logger } = options;
  const tickMs = options.tickMs ?? 30_000;
  const batchSize = options.batchSize ?? 50;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const leaseMs = options.leaseMs ?? 300_000;
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;

  /**
   * Claims and sends until a claim comes back short of `batchSize` (or after one claim when
   * `drain` is false, or once stopped); resolves with the number of rows attempted, rejects with
   * a failed claim's error once the rows claimed before it were attempted. Rows claimed
   * are all attempted, even after `stop()`: a claimed row left unsent would wait out its lease.
   */
  const pass = async (drain: boolean): Promise<number> => {
    const waiting: DeliveryRow[] = [];
    let attempted = 0;
    let more = true;
    let failure: { err: unknown } | undefined;
    /** The claim in flight; it never rejects: a failure ends the claiming and fails the pass. */
    let claiming: Promise<void> | undefined;
    const claim = (): Promise<void> =>
      (claiming ??= store.outbox
        .claimDueDeliveries(clock.now(), batchSize, leaseMs)
        .then(
          (rows) => {
            waiting.push(...rows);
            more = drain && rows.length >= batchSize;
          },
          (err: unknown) => {
            failure ??= { err };
            more = false;
          },
        )
        .finally(() => {
          claiming = undefined;
        }));
    const next = async (): Promise<DeliveryRow | undefined> => {
      for (;;) {
        // Claim ahead: the next batch is on its way before the lanes run out of rows.
        if (waiting.length < concurrency && more && !stopped) void claim();
        const row = waiting.shift();
        if (row) return row;
        if (!claiming) return undefined;
        await claiming;
      }
    };
    const lane = async (): Promise<void> => {
      for (let row = await next(); row; row = await next()) {
        attempted += 1;
        try {
          await outbox.attemptClaimed(row);
        } catch (err) {
          // A failed attempt (its database write failed) ends the claiming, not this lane: the
          // rows already claimed are still attempted, and the pass (so `stop()`) waits for every
          // lane instead of settling while the others still send and claim.
          failure ??= { err };
          more = false;
        }
      }
    };
    await claim();
    // Every lane, even when the first claim is smaller than `concurrency` (batchSize below it):
    // claims ahead feed them all.
    await Promise.all(Array.from({ length: waiting.length > 0 ? concurrency : 0 }, lane));
    // Rows claimed before a failed claim or attempt were still attempted; the failure is the pass's.
    if (failure) throw failure.err;
    return attempted;
  };

  const tick = (): Promise<number> => {
    const current = running.catch(() => 0).then(() => pass(false));
    running = current;
    return current;
  };
  const loop = (): void => {
    if (stopped) return;
    const current = running.catch(() => 0).then(() => pass(true));
    running = current;
    // A pass drains the backlog, so the next one waits a tick, failed or not; the failure is logged.
    current
      .catch((err: unknown) => logger.error({ err }, 'delivery worker tick failed'))
      .then(() => {
        if (!stopped) timer = setTimeout(loop, tickMs);
      });
  };
  let timer: NodeJS.Timeout | undefined = setTimeout(loop, 0);
  return {
    tick,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running.catch(() => 0);
    },
  };
}
