/**
 * Runs other nodes route here: woken by NOTIFY at once, and found by a poll every heartbeat when
 * a notification is missed (or on a database without LISTEN).
 */
import type { Logger } from '../../core/logger.js';
import type { NodeRegistry } from '../../fleet/nodes.js';
import { RUNS_CHANNEL } from '../../store/runs-repo.js';
import type { Runtime } from '../runtime.js';

/** The LISTEN and the poll for routed runs. */
export interface RoutedRunsWatch {
  /** Stops the poll. */
  stopPoll(): void;
  /** Ends the LISTEN, when there is one. */
  unlisten?: () => Promise<void>;
}

/** LISTENs (where the database can) and polls every `heartbeatMs` (at least every second). */
export async function watchRoutedRuns(
  registry: NodeRegistry,
  runtime: Runtime,
  heartbeatMs: number,
  logger: Logger,
): Promise<RoutedRunsWatch> {
  const { database, dispatcher, store } = runtime;
  const wakeForRoutedRuns = (payload: string): void => {
    if (payload === registry.name) void dispatcher.startQueued();
  };
  const unlisten = database.listen
    ? await database.listen(RUNS_CHANNEL, wakeForRoutedRuns).catch((err: unknown) => {
        logger.warn({ err }, 'could not LISTEN for routed runs; polling for them every heartbeat instead');
        return undefined;
      })
    : undefined;
  const timer = setInterval(
    () => {
      store.queue
        .hasQueuedFor(registry.name, registry.instance)
        .then((waiting) => (waiting ? dispatcher.startQueued() : undefined))
        .catch((err: unknown) => logger.warn({ err }, 'could not look for runs routed to this node'));
    },
    Math.max(1_000, heartbeatMs),
  );
  timer.unref();
  return { stopPoll: () => clearInterval(timer), ...(unlisten ? { unlisten } : {}) };
}
