/**
 * `baton start`'s start-up, begun again when the database connection under it is lost.
 */
import { isConnectionLoss } from '../store/connection-loss.js';

/** Start-up attempts made before `baton start` gives up on a database that keeps dropping it. */
export const START_ATTEMPTS = 3;
/** Pause before another attempt after a lost connection, in ms (a stall is retried at once). */
export const START_RETRY_PAUSE_MS = 1_000;

/** What {@link startWithRetries} needs besides the start itself. */
export interface StartAttemptsDeps {
  /** Where the one line per retry (and the final give-up line) goes; stderr in `baton start`. */
  say: (line: string) => void;
  /** Waits `ms`; `setTimeout` in `baton start`. */
  sleep: (ms: number) => Promise<void>;
  /** Process to watch for `beforeExit` (a stalled attempt); `process` in `baton start`. */
  events: Pick<NodeJS.Process, 'once' | 'removeListener'>;
}

/** Thrown by {@link startWithRetries} once every attempt failed on the database connection. */
export class StartGaveUpError extends Error {
  constructor(
    readonly attempts: number,
    readonly lastError: unknown,
  ) {
    super(
      `start-up lost its database connection ${attempts} times; giving up (check the database's idle_session_timeout, its logs and the network to it)`,
      { cause: lastError },
    );
    this.name = 'StartGaveUpError';
  }
}

/**
 * Runs `start`, again (at most {@link START_ATTEMPTS} attempts in all) when an attempt ends on a
 * lost database connection, which a server closing idle sessions (`idle_session_timeout`, a
 * pooler), a restart or a network cut can do at any query of start-up:
 * - the attempt rejects with a connection loss ({@link isConnectionLoss}: e.g. postgres.js
 *   `CONNECTION_CLOSED` on a query sent as the server closed the session); `start` released what
 *   it opened before rejecting (src/main.ts `startService`), and the next attempt starts after
 *   {@link START_RETRY_PAUSE_MS};
 * - or the attempt stalls: a query's promise never settles (the postgres.js fault of
 *   src/store/driver-faults.ts), nothing else keeps Node busy, and Node emits `beforeExit`, which
 *   fires only once nothing at all is pending, so the stalled attempt is certainly dead.
 * Start-up's statements are idempotent, so running them again is safe. Any
 * other error is not retried.
 *
 * @returns what `start` resolved with.
 * @throws whatever a non-connection error `start` threw; {@link StartGaveUpError} after the last
 *   attempt was lost too (its `cause` is the last error, or undefined for a stall).
 */
export async function startWithRetries<T>(start: () => Promise<T>, deps: StartAttemptsDeps): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let onStall: (() => void) | undefined;
    const stalled = new Promise<{ stalled: true }>((resolve) => {
      onStall = () => resolve({ stalled: true });
      deps.events.once('beforeExit', onStall);
    });
    let outcome: { value: T } | { stalled: true } | { lost: unknown };
    try {
      outcome = await Promise.race([start().then((value) => ({ value })), stalled]);
    } catch (err) {
      if (!isConnectionLoss(err)) throw err;
      outcome = { lost: err };
    } finally {
      deps.events.removeListener('beforeExit', onStall!);
    }
    if ('value' in outcome) return outcome.value;
    const lastError = 'lost' in outcome ? outcome.lost : undefined;
    if (attempt >= START_ATTEMPTS) throw new StartGaveUpError(attempt, lastError);
    const why =
      'lost' in outcome
        ? `lost its database connection (${describe(outcome.lost)})`
        : 'stalled on a database connection the server closed';
    deps.say(`baton: start-up ${why}; starting again (attempt ${attempt + 1} of ${START_ATTEMPTS})`);
    if ('lost' in outcome) await deps.sleep(START_RETRY_PAUSE_MS);
  }
}

/**
 * The error's code, or else its driver's message, one line, for the retry notice. Never the
 * message of drizzle's wrapper, whose later lines carry the statement's parameters (user text).
 */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return 'unknown error';
  const cause = err.cause instanceof Error ? err.cause : undefined;
  const code = (err as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code;
  const text = typeof code === 'string' ? code : (cause ?? err).message;
  return text.split('\n')[0]!.slice(0, 200);
}
