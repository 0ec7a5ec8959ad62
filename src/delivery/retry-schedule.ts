/**
 * When a failed delivery is tried again: a few quick retries, then a doubling schedule with a cap,
 * and the caps after which a row is dead-lettered.
 */

/** Retry schedule and caps. */
export interface OutboxPolicy {
  /** First retry delay, in ms; doubles per attempt. @default 30_000 */
  backoffBaseMs: number;
  /** Longest retry delay, in ms. @default 1_800_000 (30 min) */
  backoffCapMs: number;
  /** Attempts before a row is dead-lettered. @default 20 */
  maxAttempts: number;
  /** Age after which a row is dead-lettered, in ms. @default 86_400_000 (24 h) */
  maxAgeMs: number;
  /**
   * Delays of the first retries, in ms, before the doubling schedule takes over (which then
   * starts from `backoffBaseMs`): a 5xx or a cut connection is mostly over within seconds. Each is
   * attempted by this process at its time, not at the retry worker's next tick.
   * @default none: the doubling schedule from the first failure (the service sets {@link QUICK_RETRY_DELAYS_MS})
   */
  quickRetryDelaysMs?: readonly number[];
}

/**
 * The service's quick retries: 1, 2, 4 and 8 s after the failures before them, so five failed
 * attempts in a row (a burst of HTTP 500s) take 15 s, and the sixth comes 30 s after the fifth.
 */
export const QUICK_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000, 8_000];

/** Backoff before retry number `attempt` (1-based): base·2^(attempt−1), capped. */
export function backoffMs(attempt: number, policy: Pick<OutboxPolicy, 'backoffBaseMs' | 'backoffCapMs'>): number {
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Delay before retry number `attempt` (1-based): the quick delays first, then
 * {@link backoffMs} counted from the first retry after them.
 */
export function retryDelayMs(attempt: number, policy: Omit<OutboxPolicy, 'maxAttempts' | 'maxAgeMs'>): number {
  const quick = policy.quickRetryDelaysMs ?? [];
  return attempt <= quick.length ? quick[attempt - 1]! : backoffMs(attempt - quick.length, policy);
}
