/**
 * A clock that moves only when the test moves it: code under test reads time from it, so
 * backoffs, ages and deadlines are asserted without waiting for them.
 */
import type { Clock } from '../../src/core/clock.js';

/** A {@link Clock} that starts at a given instant and stands still until `advance` or `set`. */
export class ManualClock implements Clock {
  private ms: number;

  /** @param start - the first instant, as milliseconds since the Unix epoch or an ISO-8601 string. */
  constructor(start: number | string) {
    this.ms = typeof start === 'string' ? Date.parse(start) : start;
    if (Number.isNaN(this.ms)) throw new Error(`ManualClock: not an instant: ${String(start)}`);
  }

  /** Milliseconds since the Unix epoch. */
  nowMs(): number {
    return this.ms;
  }

  /** The current instant, as a new `Date`. */
  now(): Date {
    return new Date(this.ms);
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }

  /** Moves the clock to the instant `ms` (milliseconds since the Unix epoch). */
  set(ms: number): void {
    this.ms = ms;
  }
}
