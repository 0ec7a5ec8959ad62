/**
 * The texts of schedules: `/every`, `/at`, `/schedules` and the notices a firing posts. Each
 * notice starts with the schedule's tag, `⏰ NAME · s_…`, as a run's messages start with `[run …]`.
 */
import { formatDurationMs } from '../core/clock.js';

/** Facts of one schedule as the texts show it. */
export interface ScheduleFacts {
  id: string;
  name: string;
  /** Cron expression, or undefined for a one-shot. */
  cron: string | null;
  runAt: Date | null;
  timezone: string;
  until: Date | null;
  overlap: 'skip' | 'queue';
  command: string;
  state: string;
  /** The next slot, when one is left and the schedule is active. */
  next?: Date | undefined;
  /** The last firing: its status and reason, its run. */
  last?: { slotAt: Date; status: string; reason: string | null; runId: string | null } | undefined;
}

/** `⏰ NAME · s_…`, the tag every notice of a schedule starts with. */
export function scheduleTag(schedule: { id: string; name: string }): string {
  return `⏰ ${schedule.name} · ${schedule.id}`;
}

/** An instant as shown: `YYYY-MM-DD HH:MM Area/City`, read in the schedule's zone. */
function at(date: Date, timezone: string): string {
  const local = new Intl.DateTimeFormat('sv-SE', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).format(date);
  return `${local} ${timezone}`;
}

function whenOf(s: ScheduleFacts): string {
  const until = s.until ? ` until ${at(s.until, s.timezone)}` : '';
  return s.cron ? `every \`${s.cron}\` (${s.timezone})${until}` : `once at ${at(s.runAt ?? new Date(0), s.timezone)}`;
}

/** The answer to a created schedule. */
export function scheduleCreatedText(s: ScheduleFacts): string {
  const next = s.next ? `next: ${at(s.next, s.timezone)}` : 'no slot left';
  const overlap = s.overlap === 'queue' ? ' · overlap: queue' : '';
  return `${scheduleTag(s)} created · ${whenOf(s)} · ${next}${overlap}\n${s.command}\n/pause ${s.id} · /unschedule ${s.id}`;
}

/** One line of `/schedules`. */
export function scheduleLine(s: ScheduleFacts): string {
  const next = s.state === 'active' && s.next ? ` · next ${at(s.next, s.timezone)}` : '';
  const last = s.last
    ? ` · last ${at(s.last.slotAt, s.timezone)}: ${s.last.status}${s.last.reason ? ` (${s.last.reason})` : ''}${s.last.runId ? ` ${s.last.runId}` : ''}`
    : '';
  return `${scheduleTag(s)} · ${s.state} · ${whenOf(s)}${next}${last}\n  ${s.command}`;
}

/** `/schedules` with none. */
export const NO_SCHEDULES = 'No schedules. Create one with /every CRON|PHRASE /codex TASK or /at TIME /codex TASK.';

/** The answer to `/pause`, `/resume`, `/unschedule`. */
export function scheduleStateText(s: { id: string; name: string }, change: 'paused' | 'resumed' | 'deleted'): string {
  return `${scheduleTag(s)} ${change}.`;
}

/** A schedule id nobody has (or one already deleted). */
export function scheduleUnknown(id: string): string {
  return `No schedule ${id}. /schedules lists them.`;
}

/** `/pause`, `/resume` or `/unschedule` without an id. */
export function scheduleNeedsId(command: string): string {
  return `Usage: /${command} s_… (the id /schedules shows).`;
}

/** The notice a firing posts before its run's own messages. */
export function firingText(
  s: { id: string; name: string },
  facts: { lateMs: number; lateAfterMs: number; skippedSince?: number; queued?: boolean },
): string {
  const late =
    facts.lateMs >= facts.lateAfterMs
      ? ` · late by ${formatDurationMs(facts.lateMs)} (every node was down at its time)`
      : '';
  const skipped = facts.skippedSince
    ? ` · ${facts.skippedSince} earlier slot${facts.skippedSince === 1 ? '' : 's'} skipped: the previous run was still active`
    : '';
  const queued = facts.queued ? ' · waited for the previous run to end' : '';
  return `${scheduleTag(s)} fires${late}${skipped}${queued}`;
}

/** A firing a gate refused (its refusal was just answered): nothing launched. */
export function blockedText(s: { id: string; name: string }, code: string): string {
  return `${scheduleTag(s)} blocked (${code}): nothing was launched; the schedule stays active.`;
}

/** A slot that waits (`overlap:queue`) because the previous run is still active. */
export function waitingText(s: { id: string; name: string }, runId: string): string {
  return `${scheduleTag(s)} waits: ${runId} is still active; it fires when that run ends.`;
}

/** A schedule past its `until`. */
export function expiredText(s: { id: string; name: string }): string {
  return `${scheduleTag(s)} expired (until reached); it stays in /schedules until deleted.`;
}

/** The shape of `/every`. */
export const EVERY_USAGE =
  'Usage: /every CRON|PHRASE [tz:Area/City] [until:YYYY-MM-DD] [overlap:queue] [to:PLATFORM:CHAT_ID] [name:NAME] /codex|/claude|/run [options] TASK. CRON has 5 fields ("0 7 * * 1-5"); phrases: minute, hour, day HH:MM, weekday HH:MM, weekend HH:MM, monday HH:MM …';
/** The shape of `/at`. */
export const AT_USAGE =
  'Usage: /at HH:MM|YYYY-MM-DDTHH:MM|+DURATION [tz:Area/City] [to:PLATFORM:CHAT_ID] [name:NAME] /codex|/claude|/run [options] TASK. DURATION: 30m, 2h, 1d, 1h30m.';
/** `overlap:` with another value. */
export const BAD_OVERLAP = 'overlap: takes skip (the default) or queue.';
/** A malformed `name:`. */
export const BAD_NAME = 'name: takes 1 to 32 letters, digits, "_", "." or "-", starting with a letter or digit.';
/** A malformed `to:`. */
export const BAD_TO = 'to: takes PLATFORM:CHAT_ID, as /whoami prints it (e.g. to:telegram:123456789).';
/** A schedule made outside a chat, without `to:`. */
export const NEEDS_TO =
  'A schedule made outside a chat needs the chat its runs report to: to:PLATFORM:CHAT_ID, as /whoami prints it (e.g. to:telegram:123456789).';
/** `to:` a platform without a `[channels.…]` section. */
export function toNotConfigured(platform: string): string {
  return `to:${platform}:… names a platform this baton has no [channels.${platform}] section for.`;
}
/** A malformed `until:`. */
export const BAD_UNTIL = 'until: takes YYYY-MM-DD (through the end of that day) or YYYY-MM-DDTHH:MM.';
/** `until:` in the past. */
export const UNTIL_PAST = 'until: is in the past; give a later date.';
/** `/at` in the past. */
export const AT_PAST = 'That time has passed; give a later one (or +DURATION).';
/** `/at +DURATION` out of range. */
export function atDurationRange(maxDays: number): string {
  return `/at +DURATION takes from 1 minute to ${maxDays} days.`;
}
/** A day phrase without its time. */
export function phraseNeedsTime(phrase: string): string {
  return `"${phrase}" needs a time of day: /every ${phrase} 07:00 /codex TASK.`;
}
/** A cron expression croner refused. */
export function badCron(pattern: string, detail: string): string {
  return `"${pattern}" is not a valid time: ${detail}. ${EVERY_USAGE}`;
}
/** An unknown time zone. */
export function badTimezone(timezone: string): string {
  return `Unknown time zone "${timezone}"; use an IANA name such as Europe/Berlin or America/New_York.`;
}
/** The launch part is not a launch command. */
export const NOT_A_LAUNCH = 'A schedule repeats a launch: /codex, /claude or /run, with its options and task.';

/** The buttons under a schedule in `/schedules`. */
export const SCHEDULE_BUTTONS = { pause: 'Pause', resume: 'Resume', runNow: 'Run now', delete: 'Delete' } as const;

/** The answer to a Run now press. */
export function runNowText(s: { id: string; name: string }): string {
  return `${scheduleTag(s)} fires within seconds.`;
}

/** A schedule already in the state asked for, or past changing (expired, done). */
export function scheduleIsText(s: { id: string; name: string; state: string }): string {
  return `${scheduleTag(s)} is ${s.state}.`;
}
