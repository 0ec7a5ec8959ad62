/** The source of time. Tests pass a fake; nothing else calls `Date.now()` directly. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  nowMs(): number;
  /** The current time as a `Date`. */
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  now: () => new Date(),
};

/**
 * Formats a duration for people: `850ms`, `42s`, `3m 05s`, `1h 02m`.
 *
 * @param ms - duration in milliseconds; negative values are treated as 0.
 */
export function formatDurationMs(ms: number): string {
  const safe = Math.max(0, Math.round(ms));
  if (safe < 1000) return `${safe}ms`;
  const totalSeconds = Math.round(safe / 1000);
  if (totalSeconds < 60) return `${totalSeconds}s`;
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  return `${minutes}m ${String(seconds).padStart(2, '0')}s`;
}
