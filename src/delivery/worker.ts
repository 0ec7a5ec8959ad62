/**
 * The retry worker (PRODUCT.md §9): every tick it claims due pending deliveries and attempts each
 * through the {@link Outbox}. Claims skip rows another process holds, so several service
 * processes on one database never send a row at the same time.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
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
  /** Runs one tick now; resolves with the number of rows attempted. */
  tick(): Promise<number>;
  stop(): Promise<void>;
}

/** Starts the worker; the first tick runs at once (pending rows from before a restart). */
export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { store, outbox, clock, logger } = options;
  const tickMs = options.tickMs ?? 30_000;
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;

  const tick = (): Promise<number> => {
    running = running.then(async () => {
      const rows = await store.claimDueDeliveries(clock.now(), options.batchSize ?? 50, options.leaseMs ?? 300_000);
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < rows.length) await outbox.attemptClaimed(rows[next++]!);
      };
      await Promise.all(Array.from({ length: Math.min(options.concurrency ?? 8, rows.length) }, lane));
      return rows.length;
    });
    return running;
  };
  const loop = (): void => {
    if (stopped) return;
    tick()
      .then(
        // A full batch means a backlog: drain it at once instead of 50 rows per tick.
        (claimed) => claimed >= (options.batchSize ?? 50),
        (err: unknown) => {
          logger.error({ err }, 'delivery worker tick failed');
          return false;
        },
      )
      .then((backlog) => {
        if (!stopped) timer = setTimeout(loop, backlog ? 0 : tickMs);
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
