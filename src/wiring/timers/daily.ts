/** A task that runs at start and then daily, such as a retention sweep. */
import type { BatonConfig } from '../../config/index.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { RunStore } from '../../store/runs-repo.js';

/** What every daily retention task reads: the limits in the config, the runs, the time, the log. */
export interface RetentionDeps {
  config: BatonConfig;
  store: RunStore;
  clock: Clock;
  logger: Logger;
}

/** How often a daily task runs, in ms. */
export const SWEEP_INTERVAL_MS = 24 * 3_600_000;

/**
 * Runs `task` now and every {@link SWEEP_INTERVAL_MS}; a failed run is logged as `failure`. The
 * timer does not keep the process alive.
 *
 * @returns stops the timer.
 */
export function startDailyTimer(task: () => Promise<unknown>, logger: Logger, failure: string): () => void {
  const run = (): void => {
    task().catch((err: unknown) => logger.error({ err }, failure));
  };
  run();
  const timer = setInterval(run, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
