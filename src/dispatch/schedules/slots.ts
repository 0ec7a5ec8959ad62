/**
 * When a schedule fires. Every computation over a calendar (cron fields, time zones, DST) is
 * croner's (https://croner.56k.guru); nothing here adds days or hours by hand. Pure: the instant
 * to compute from is always passed in.
 */
import { Cron } from 'croner';
import { BatonError } from '../../core/errors.js';
import * as words from '../../wording/schedules.js';

/** What decides a schedule's slots: a cron expression, or one instant (`/at`). */
export interface ScheduleWhen {
  /** A 5-field cron expression, read in {@link timezone}; null for a one-shot. */
  cron: string | null;
  /** The one-shot's instant; null for a cron schedule. */
  runAt: Date | null;
  /** IANA zone, e.g. `Europe/Berlin`. */
  timezone: string;
  /** No slot at or after this instant; null: none. */
  until: Date | null;
}

/**
 * A croner job that never runs a callback, used only to compute instants.
 *
 * @throws BatonError `usage` when the pattern (cron fields or an ISO local time) or the zone is not valid.
 */
export function cronOf(pattern: string, timezone: string): Cron {
  assertTimezone(timezone);
  try {
    return new Cron(pattern, { timezone, paused: true });
  } catch (err) {
    throw new BatonError('usage', words.badCron(pattern, err instanceof Error ? err.message : String(err)), {
      cause: err,
    });
  }
}

/**
 * Refuses a zone the runtime's Intl does not know (IANA names such as `America/New_York`).
 *
 * @throws BatonError `usage` naming the zone.
 */
export function assertTimezone(timezone: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch (err) {
    throw new BatonError('usage', words.badTimezone(timezone), { cause: err });
  }
}

/** The first slot strictly after `after`, or undefined when none is left (a past one-shot, `until`). */
export function nextSlot(when: ScheduleWhen, after: Date): Date | undefined {
  const slot = when.cron ? (cronOf(when.cron, when.timezone).nextRun(after) ?? undefined) : when.runAt;
  if (!slot || slot.getTime() <= after.getTime()) return undefined;
  if (when.until && slot.getTime() >= when.until.getTime()) return undefined;
  return slot;
}

/**
 * The latest slot in `(since, now]` (and before `until`), or undefined: the one slot a node fires
 * when it looks, however many it missed while every node was down.
 */
export function latestDueSlot(when: ScheduleWhen, now: Date, since: Date): Date | undefined {
  let slot: Date | undefined;
  if (when.cron) {
    // previousRuns excludes its reference: 1 ms past `now` lets a slot at `now` itself count.
    const reference = when.until && when.until.getTime() <= now.getTime() ? when.until : new Date(now.getTime() + 1);
    slot = cronOf(when.cron, when.timezone).previousRuns(1, reference)[0];
  } else slot = when.runAt ?? undefined;
  if (!slot || slot.getTime() <= since.getTime() || slot.getTime() > now.getTime()) return undefined;
  if (when.until && slot.getTime() >= when.until.getTime()) return undefined;
  return slot;
}

/** Whether no slot is left after `now`: a one-shot that fired, or a schedule past its `until`. */
export function isFinished(when: ScheduleWhen, now: Date): boolean {
  return nextSlot(when, now) === undefined;
}
