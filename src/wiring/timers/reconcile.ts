/**
 * At start and every minute: runs whose service process on this host died are stopped and
 * reported, so a crashed sibling never holds a worktree lock for good.
 */
import { outcomeText } from '../../wording/runs.js';
import { harnessWords } from '../../wording/harness.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { isProcessAlive } from '../../core/process.js';
import { reconcileOrphanedRuns } from '../../harness/reconcile.js';
import type { DeliveryRow } from '../../store/schema.js';
import type { Runtime } from '../runtime.js';
import { KILL_GRACE_MS, VENDORS } from '../vendors.js';

/** How often to look for runs orphaned by a dead service process, in ms. */
export const RECONCILE_INTERVAL_MS = 60_000;

/**
 * Ends this host's runs whose service process is gone; resolves with the messages that report
 * them (not sent yet).
 *
 * @param startup true at start, when no run of this process can be active yet.
 */
export function reconcileOrphans(
  runtime: Runtime,
  clock: Clock,
  logger: Logger,
  startup: boolean,
): Promise<DeliveryRow[]> {
  const { supervisor } = runtime;
  return reconcileOrphanedRuns({
    store: runtime.store,
    clock,
    logger,
    vendors: new Map(VENDORS.map((v) => [v.name, v])),
    host: runtime.host,
    isAlive: isProcessAlive,
    isSupervisedHere: (runId) => supervisor.supervises(runId),
    startup,
    killGraceMs: KILL_GRACE_MS,
    cgroups: runtime.cgroups,
    runsDir: runtime.runsDir,
    describeOutcome: outcomeText,
    words: harnessWords,
  });
}

/**
 * Reconciles every {@link RECONCILE_INTERVAL_MS}, sends the reports, then starts queued runs whose
 * slot is free (even if the process that freed it died).
 *
 * @returns stops the timer.
 */
export function startReconcileTimer(runtime: Runtime, clock: Clock, logger: Logger): () => void {
  const timer = setInterval(() => {
    reconcileOrphans(runtime, clock, logger, false)
      .then(async (rows) => {
        for (const row of rows) await runtime.outbox.attempt(row);
      })
      .catch((err: unknown) => logger.error({ err }, 'reconciling orphaned runs failed'))
      .finally(() => runtime.dispatcher.startQueued());
  }, RECONCILE_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
