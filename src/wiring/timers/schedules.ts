/**
 * The schedule firing loop, on every node of the fleet: a look every heartbeat at the
 * schedules in the database (see src/dispatch/schedules/firing.ts); the database decides which
 * node fires each slot.
 */
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { ScheduleFiring } from '../../dispatch/schedules/firing.js';
import type { ScheduleStore } from '../../store/schedules-repo.js';
import type { Runtime } from '../runtime.js';

/**
 * Looks at the schedules every `intervalMs` (at least every second), one look at a time, and
 * once at once (a slot missed while every node was down fires now, not a heartbeat later).
 *
 * @returns stops the loop (a look under way finishes).
 */
export function startScheduleTimer(
  runtime: Runtime,
  schedules: ScheduleStore,
  options: { node: string; intervalMs: number; catchUp: () => 'one' | 'none'; clock: Clock; logger: Logger },
): () => void {
  const firing = new ScheduleFiring({
    schedules,
    outbox: runtime.outbox,
    clock: options.clock,
    logger: options.logger,
    node: options.node,
    catchUp: options.catchUp,
    handle: (message) => runtime.dispatcher.handle(message),
  });
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = (): void => {
    void firing.tick().finally(() => {
      if (stopped) return;
      timer = setTimeout(look, Math.max(1_000, options.intervalMs));
      timer.unref();
    });
  };
  look();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
