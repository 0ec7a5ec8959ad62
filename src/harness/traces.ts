/**
 * Lifecycle traces: one JSON line per event in
 * `$BATON_HOME/traces/YYYY-MM-DD/harness.jsonl` (UTC date), mode 0600. Best effort: a trace that
 * cannot be written is logged, never fails a run. Traces carry ids, states and sizes, never a
 * prompt, a token or an environment.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';

/** Lifecycle event names. */
export type TraceEvent = 'run_start' | 'progress' | 'run_complete' | 'run_error';

/** Writes trace lines. */
export interface Tracer {
  trace(event: TraceEvent, fields: Record<string, string | number | boolean | null>): void;
  /** Resolves when every trace written so far is on disk (tests, shutdown). */
  flush(): Promise<void>;
}

/** A tracer writing under `tracesDir`. */
export function fileTracer(tracesDir: string, clock: Clock, logger: Logger): Tracer {
  let chain: Promise<void> = Promise.resolve();
  return {
    trace(event, fields) {
      const now = clock.now();
      const day = now.toISOString().slice(0, 10);
      const line = `${JSON.stringify({ ts: now.toISOString(), event, ...fields })}\n`;
      chain = chain
        .then(async () => {
          const dir = join(tracesDir, day);
          await mkdir(dir, { recursive: true, mode: 0o700 });
          await appendFile(join(dir, 'harness.jsonl'), line, { mode: 0o600 });
        })
        .catch((err: unknown) => logger.warn({ err, event }, 'could not write a trace'));
    },
    flush: () => chain,
  };
}

/** A tracer that writes nothing. */
export const noTracer: Tracer = { trace: () => {}, flush: () => Promise.resolve() };
