import { randomBytes } from 'node:crypto';

/** A run id: `hr_` followed by 12 lowercase hex characters. */
export type RunId = string & { readonly __brand: 'RunId' };

const RUN_ID_PATTERN = /^hr_[0-9a-f]{12}$/;

/** Makes a fresh random {@link RunId} (48 random bits). */
export function newRunId(): RunId {
  return `hr_${randomBytes(6).toString('hex')}` as RunId;
}

/** True when `value` has the shape of a {@link RunId}. */
export function isRunId(value: string): value is RunId {
  return RUN_ID_PATTERN.test(value);
}

/** Finds the first `[run hr_…]` tag in a message, as the reader's dedupe key. */
export function findRunIdTag(text: string): RunId | undefined {
  const match = /\[run (hr_[0-9a-f]{12})\]/.exec(text);
  return match?.[1] as RunId | undefined;
}

/** A schedule id: `s_` followed by 8 lowercase hex characters. */
export type ScheduleId = string & { readonly __brand: 'ScheduleId' };

/** Makes a fresh random {@link ScheduleId} (32 random bits). */
export function newScheduleId(): ScheduleId {
  return `s_${randomBytes(4).toString('hex')}` as ScheduleId;
}
