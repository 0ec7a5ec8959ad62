/**
 * Keeps the embedded PostgreSQL server up under a long-lived process (the service): when its
 * postmaster is gone (killed by the OOM killer, `kill -9`), nobody else would start it again, and
 * every query would fail until baton itself restarted. The watcher looks at the postmaster's pid
 * file every `checkMs`, and when the server is gone starts it again, with backoff between failed
 * attempts and one log line per event. The pool reconnects by itself once the server answers, and
 * the inbox's retry sweep then hands out what it holds.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { livePostmasterOf } from './embedded-postgres.js';

/** The log lines the watcher writes (a pino logger fits). */
export interface WatchLogger {
  error(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Options of {@link watchEmbeddedPostgres}. */
export interface WatchOptions {
  dataDir: string;
  /** Starts the server again (startEmbeddedPostgres); throws when it could not. */
  restart: () => Promise<void>;
  logger: WatchLogger;
  /** How often the pid file is looked at, in ms. @default 1_000 */
  checkMs?: number;
  /** Wait after the first failed restart, in ms; doubles up to `maxBackoffMs`. @default 1_000 */
  firstBackoffMs?: number;
  /** Longest wait between restart attempts, in ms. @default 30_000 */
  maxBackoffMs?: number;
}

/** A running watcher. */
export interface EmbeddedWatch {
  /** Stops watching (before the process itself stops the server); waits for a restart under way. */
  stop(): Promise<void>;
}

/**
 * Starts watching the server on `dataDir`. Never throws; failures are logged and retried.
 */
export function watchEmbeddedPostgres(options: WatchOptions): EmbeddedWatch {
  const checkMs = options.checkMs ?? 1_000;
  const firstBackoffMs = options.firstBackoffMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const stopping = new AbortController();
  let known: number | undefined;
  const loop = async (): Promise<void> => {
    known = await livePostmasterOf(options.dataDir);
    while (!stopping.signal.aborted) {
      await sleep(checkMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      if (stopping.signal.aborted) return;
      const now = await livePostmasterOf(options.dataDir);
      if (now !== undefined) {
        known = now;
        continue;
      }
      const goneAtMs = Date.now();
      options.logger.error(
        { dataDir: options.dataDir, pid: known ?? null },
        `embedded PostgreSQL server (pid ${known ?? 'unknown'}) is gone; restarting it`,
      );
      let backoffMs = firstBackoffMs;
      for (let attempt = 1; !stopping.signal.aborted; attempt++) {
        try {
          await options.restart();
          known = await livePostmasterOf(options.dataDir);
          options.logger.warn(
            { dataDir: options.dataDir, pid: known ?? null, attempt, downMs: Date.now() - goneAtMs },
            `embedded PostgreSQL server restarted (pid ${known ?? 'unknown'}, attempt ${attempt}, ${Date.now() - goneAtMs} ms after it was found gone)`,
          );
          break;
        } catch (err) {
          options.logger.error(
            { dataDir: options.dataDir, attempt, err: err instanceof Error ? err.message : String(err) },
            `could not restart the embedded PostgreSQL server (attempt ${attempt}); trying again in ${backoffMs} ms`,
          );
          await sleep(backoffMs, undefined, { signal: stopping.signal }).catch(() => undefined);
          backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
        }
      }
    }
  };
  const running = loop().catch((err: unknown) =>
    options.logger.error(
      { err: err instanceof Error ? err.message : String(err) },
      'the embedded PostgreSQL watcher stopped',
    ),
  );
  return {
    stop: async () => {
      stopping.abort();
      await running;
    },
  };
}
