/**
 * Start-up leaves dead objects that V8's memory reducer would return only 10–20 s later; one
 * full collection once the channels' first polls have settled returns them now.
 * (Runs and git start their processes with node:child_process: the service never loads execa,
 * which only the doctor and the embedded database's set-up use.)
 */
import type { Logger } from '../../core/logger.js';
import { collectGarbageNow } from '../../core/memory.js';

/** How long after `baton ready` start-up's garbage is collected, in ms. */
const STARTUP_GC_DELAY_MS = 1_000;
/** Bytes → MB with one decimal, for log fields. */
const toMb = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;

/**
 * Collects garbage once, {@link STARTUP_GC_DELAY_MS} from now.
 *
 * @returns cancels it.
 */
export function scheduleStartupGc(logger: Logger): () => void {
  const timer = setTimeout(() => {
    const freed = collectGarbageNow();
    logger.debug(
      {
        heapUsedMb: toMb(freed.heapUsedAfterBytes),
        freedHeapMb: toMb(freed.heapUsedBeforeBytes - freed.heapUsedAfterBytes),
        rssMb: toMb(freed.rssAfterBytes),
      },
      'start-up garbage collected',
    );
  }, STARTUP_GC_DELAY_MS);
  timer.unref();
  return () => clearTimeout(timer);
}
