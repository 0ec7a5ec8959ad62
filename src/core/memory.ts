/**
 * Returning start-up garbage to the operating system once the service is ready.
 *
 * Loading baton and its chat SDKs (~1,500 CommonJS modules with Telegram, Slack and Discord
 * configured) leaves dead objects in V8's old generation that its memory reducer collects only
 * some 10–20 s later. Measured (PostgreSQL, three channels, young generation capped
 * by `--max-semi-space-size=2`): RSS 113 MB for the first 12 s after ready, then ~99 MB; with one
 * full collection 1 s after ready, 103 → 95 MB.
 */
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Heap and RSS around one collection, in bytes. */
export interface CollectedGarbage {
  heapUsedBeforeBytes: number;
  heapUsedAfterBytes: number;
  rssBeforeBytes: number;
  rssAfterBytes: number;
}

let collect: (() => void) | undefined;

/**
 * Runs one full, synchronous garbage collection and reports heap and RSS around it.
 *
 * Node offers no call for this without `node --expose-gc`, which the service does not run with.
 * So the flag is set for the creation of one fresh `vm` context, whose `gc` function is kept, and
 * cleared again: V8 installs `gc` on contexts created while `--expose-gc` is set (V8
 * `flag-definitions.h`; the `expose-gc` npm package does the same). The main context never gets a
 * `gc` global. Blocks the event loop for the collection (tens of ms for a ~40 MB heap): call it
 * at a quiet moment only.
 */
export function collectGarbageNow(): CollectedGarbage {
  const before = process.memoryUsage();
  if (!collect) {
    v8.setFlagsFromString('--expose-gc');
    try {
      collect = runInNewContext('gc') as () => void;
    } finally {
      v8.setFlagsFromString('--no-expose-gc');
    }
  }
  collect();
  const after = process.memoryUsage();
  return {
    heapUsedBeforeBytes: before.heapUsed,
    heapUsedAfterBytes: after.heapUsed,
    rssBeforeBytes: before.rss,
    rssAfterBytes: after.rss,
  };
}
