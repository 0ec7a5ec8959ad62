/**
 * Opening the database at service start while PostgreSQL may still be down.
 * Under systemd (`Restart=on-failure`) an immediate exit became a restart loop whose journal held
 * a stack per restart; the service now waits for the server itself, says why in one line per
 * attempt, and only then exits (the unit's `RestartSec` spaces what follows).
 */
import { setTimeout as sleepFor } from 'node:timers/promises';
import { isBatonError } from '../core/errors.js';
import { openDatabase, type Database, type OpenDatabaseOptions } from './database.js';

/** How {@link openDatabaseWithRetry} waits. */
export interface OpenRetryPolicy {
  /** Give up (and rethrow) once this many ms have passed since the first attempt. @default 60_000 */
  maxWaitMs: number;
  /** Wait after the first failed attempt, in ms; doubles up to `maxDelayMs`. @default 1_000 */
  firstDelayMs: number;
  /** Longest wait between attempts, in ms. @default 15_000 */
  maxDelayMs: number;
}

/** The defaults of {@link OpenRetryPolicy}. */
export const OPEN_RETRY_POLICY: OpenRetryPolicy = { maxWaitMs: 60_000, firstDelayMs: 1_000, maxDelayMs: 15_000 };

/** Dependencies of {@link openDatabaseWithRetry}. */
export interface OpenRetryDeps {
  /** Gets one line per failed attempt, e.g. for the journal; no stack, no secret. */
  say: (line: string) => void;
  nowMs: () => number;
  policy?: OpenRetryPolicy;
  /** The opener (a seam for tests). @default openDatabase */
  open?: (options: OpenDatabaseOptions) => Promise<Database>;
  /** Waits `ms` (a seam for tests). @default node:timers/promises setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * {@link openDatabase}, retried with exponential backoff while it fails with
 * `database_unavailable` on PostgreSQL. Other failures (a bad migration, a locked embedded data
 * directory) are thrown at once: waiting cannot fix them. The wait before the last attempt is cut
 * to what is left of `maxWaitMs`, so the last attempt is made when `maxWaitMs` has passed, as each
 * line says, not up to one whole wait (15 s) earlier.
 *
 * @throws BatonError `database_unavailable` after `maxWaitMs`; `migration_failed` at once.
 */
export async function openDatabaseWithRetry(options: OpenDatabaseOptions, deps: OpenRetryDeps): Promise<Database> {
  const policy = deps.policy ?? OPEN_RETRY_POLICY;
  const open = deps.open ?? openDatabase;
  const sleep = deps.sleep ?? sleepFor;
  const startMs = deps.nowMs();
  let delayMs = policy.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const database = await open(options);
      if (attempt > 1) deps.say(`baton: the database answered (attempt ${attempt}); starting`);
      return database;
    } catch (err) {
      if (!('url' in options) || !isBatonError(err, 'database_unavailable')) throw err;
      const leftMs = policy.maxWaitMs - (deps.nowMs() - startMs);
      if (leftMs <= 0) throw err;
      const waitMs = Math.min(delayMs, leftMs);
      deps.say(
        `baton: ${err.message.split('. ')[0]}; retrying in ${Math.round(waitMs / 1000)}s ` +
          `(attempt ${attempt}, giving up after ${Math.round(policy.maxWaitMs / 1000)}s)`,
      );
      await sleep(waitMs);
      delayMs = Math.min(delayMs * 2, policy.maxDelayMs);
    }
  }
}
