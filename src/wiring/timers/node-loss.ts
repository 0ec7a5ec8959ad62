/** Every heartbeat: runs of nodes that stopped beating are ended `node_lost` and reported. */
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { reconcileLostNodes } from '../../fleet/node-loss.js';
import type { NodeRegistry } from '../../fleet/nodes.js';
import type { Runtime } from '../runtime.js';
import { VENDORS } from '../vendors.js';

/**
 * Looks for lost nodes every `heartbeatMs` (at least every second) and sends the reports.
 *
 * @returns stops the timer.
 */
export function startNodeLossTimer(
  registry: NodeRegistry,
  runtime: Runtime,
  heartbeatMs: number,
  clock: Clock,
  logger: Logger,
): () => void {
  const timer = setInterval(
    () => {
      reconcileLostNodes({
        registry,
        store: runtime.store,
        clock,
        logger,
        vendors: new Map(VENDORS.map((v) => [v.name, v])),
      })
        .then(async (rows) => {
          for (const row of rows) await runtime.outbox.attempt(row);
        })
        .catch((err: unknown) => logger.error({ err }, 'reconciling lost nodes failed'));
    },
    Math.max(1_000, heartbeatMs),
  );
  timer.unref();
  return () => clearInterval(timer);
}
