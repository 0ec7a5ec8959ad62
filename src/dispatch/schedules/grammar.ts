/**
 * The grammar of `/every` and `/at` (and `baton schedule add`): when, then the schedule's own
 * options, then the launch command it repeats. Pure apart from the instant it is given; croner
 * reads every time (see slots.ts).
 */
import { BatonError } from '../../core/errors.js';
import * as words from '../../wording/schedules.js';
import { cronOf, type ScheduleWhen } from './slots.js';

/** What `/every …` or `/at …` asks for, before the launch command is checked. */
export interface ScheduleRequest {
  when: ScheduleWhen;
  /** `name:NAME`; unset: made from the task by the caller. */
  name?: string;
  /** `overlap:skip|queue`. @default `skip` */
  overlap: 'skip' | 'queue';
  /** `to:PLATFORM:CHAT_ID`: deliver to that chat instead of this conversation. */
  to?: { platform: string; chatId: string };
  /** The launch command, with its slash: `/codex in:app run the tests`. */
  command: string;
}

/** The phrases `/every` reads besides cron, each the cron day-of-week field it stands for. */
const DAY_PHRASES: Readonly<Record<string, string>> = {
  day: '*',
  daily: '*',
  weekday: '1-5',
  weekdays: '1-5',
  weekend: '0,6',
  sunday: '0',
  sun: '0',
  monday: '1',
  mon: '1',
  tuesday: '2',
  tue: '2',
  wednesday: '3',
  wed: '3',
  thursday: '4',
  thu: '4',
  friday: '5',
  fri: '5',
  saturday: '6',
  sat: '6',
};

/** Phrases without a time of day, each the cron expression it stands for. */
const BARE_PHRASES: Readonly<Record<string, string>> = {
  minute: '* * * * *',
  hour: '0 * * * *',
  hourly: '0 * * * *',
};

const SCHEDULE_OPTION = /^(tz|until|overlap|to|name):(\S+)$/i;
const LAUNCH_VERB = /^\/?(codex|claude|run)$/i;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;
/** Longest `/at +DURATION`, in days. */
export const MAX_AT_DAYS = 366;

/** The words before the launch verb, and the launch command from the verb on. */
function split(rest: string, usageText: string): { head: string[]; command: string } {
  const tokens = [...rest.matchAll(/\S+/g)];
  const verb = tokens.findIndex((t) => LAUNCH_VERB.test(t[0]));
  if (verb < 0) throw usage(usageText);
  const at = tokens[verb]!;
  const command = rest.slice(at.index);
  return { head: tokens.slice(0, verb).map((t) => t[0]), command: command.startsWith('/') ? command : `/${command}` };
}

/** The schedule's options among `head`, and the words that say when. */
function readOptions(head: string[], defaultTimezone: string) {
  const options: Record<string, string> = {};
  const spec: string[] = [];
  for (const token of head) {
    const option = SCHEDULE_OPTION.exec(token);
    if (option) options[option[1]!.toLowerCase()] = option[2]!;
    else spec.push(token);
  }
  const overlap = options.overlap ?? 'skip';
  if (overlap !== 'skip' && overlap !== 'queue') throw usage(words.BAD_OVERLAP);
  if (options.name !== undefined && !NAME_PATTERN.test(options.name)) throw usage(words.BAD_NAME);
  let to: ScheduleRequest['to'];
  if (options.to !== undefined) {
    const target = /^([a-z]+):(\S+)$/.exec(options.to);
    if (!target) throw usage(words.BAD_TO);
    to = { platform: target[1]!, chatId: target[2]! };
  }
  return {
    spec,
    timezone: options.tz ?? defaultTimezone,
    untilText: options.until,
    overlap: overlap as 'skip' | 'queue',
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(to ? { to } : {}),
  };
}

/** `HH:MM` as cron's minute and hour fields, or undefined when it is not a time of day. */
function timeOfDay(text: string | undefined): string | undefined {
  const match = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(text ?? '');
  return match ? `${Number(match[2])} ${Number(match[1])}` : undefined;
}

/** The cron expression `/every`'s words stand for: a phrase, or 5 cron fields. */
function cronOfEvery(spec: string[]): string {
  const first = spec[0]?.toLowerCase() ?? '';
  const bare = BARE_PHRASES[first];
  if (bare && spec.length === 1) return bare;
  const days = DAY_PHRASES[first];
  if (days !== undefined) {
    const time = timeOfDay(spec[1]);
    if (!time || spec.length !== 2) throw usage(words.phraseNeedsTime(first));
    return `${time} * * ${days}`;
  }
  if (spec.length !== 5) throw usage(words.EVERY_USAGE);
  return spec.join(' ');
}

/**
 * `until:DATE` as the instant no slot may reach: a date alone lasts to the end of that day in
 * `timezone`; `YYYY-MM-DDTHH:MM` is that instant there.
 *
 * @throws BatonError `usage` for another shape or an instant not after `now`.
 */
function untilOf(text: string, timezone: string, now: Date): Date {
  let local: string;
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (date) {
    // The next calendar day, counted in UTC where days have no DST; its midnight is then read in the zone.
    const next = new Date(Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]) + 1));
    local = `${next.toISOString().slice(0, 10)}T00:00:00`;
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text)) local = `${text}:00`;
  else throw usage(words.BAD_UNTIL);
  const until = cronOf(local, timezone).nextRun(now);
  if (!until) throw usage(words.UNTIL_PAST);
  return until;
}

/**
 * Parses the text after `/every`: `CRON|PHRASE [options] /codex|/claude|/run [launch options] TASK`.
 * Phrases: `minute`, `hour`, `day HH:MM`, `weekday HH:MM`, `weekend HH:MM`, `monday HH:MM` …
 * Options: `tz:Area/City`, `until:DATE`, `overlap:skip|queue`, `to:PLATFORM:CHAT_ID`, `name:NAME`.
 *
 * @param now - the instant `until:` must be after.
 * @throws BatonError `usage` for anything malformed (the message shows the right form).
 */
export function parseEvery(rest: string, now: Date, defaultTimezone: string): ScheduleRequest {
  const { head, command } = split(rest, words.EVERY_USAGE);
  const { spec, timezone, untilText, ...options } = readOptions(head, defaultTimezone);
  const cron = cronOfEvery(spec);
  // Seconds or years fields would be read by croner; the grammar is the classic 5.
  cronOf(cron, timezone);
  const until = untilText === undefined ? null : untilOf(untilText, timezone, now);
  return { when: { cron, runAt: null, timezone, until }, ...options, command };
}

/**
 * Parses the text after `/at`: `TIME|+DURATION [options] /codex|/claude|/run … TASK`, where
 * TIME is `HH:MM` (its next occurrence in the zone), `YYYY-MM-DDTHH:MM`, and DURATION `30m`,
 * `2h`, `1d`, `1h30m`.
 *
 * @throws BatonError `usage` for anything malformed or a time not after `now`.
 */
export function parseAt(rest: string, now: Date, defaultTimezone: string): ScheduleRequest {
  const { head, command } = split(rest, words.AT_USAGE);
  const { spec, timezone, untilText, ...options } = readOptions(head, defaultTimezone);
  if (spec.length !== 1 || untilText !== undefined) throw usage(words.AT_USAGE);
  const runAt = instantOfAt(spec[0]!, timezone, now);
  return { when: { cron: null, runAt, timezone, until: null }, ...options, command };
}

function instantOfAt(text: string, timezone: string, now: Date): Date {
  const duration = /^\+(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?$/.exec(text);
  if (duration && text !== '+') {
    const [days, hours, minutes] = [duration[1], duration[2], duration[3]].map((n) => Number(n ?? 0)) as [
      number,
      number,
      number,
    ];
    const ms = ((days * 24 + hours) * 60 + minutes) * 60_000;
    if (ms <= 0 || ms > MAX_AT_DAYS * 86_400_000) throw usage(words.atDurationRange(MAX_AT_DAYS));
    return new Date(now.getTime() + ms);
  }
  const time = timeOfDay(text);
  const pattern = time
    ? `${time} * * *`
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)
      ? text.length === 16
        ? `${text}:00`
        : text
      : undefined;
  if (!pattern) throw usage(words.AT_USAGE);
  const at = cronOf(pattern, timezone).nextRun(now);
  if (!at) throw usage(words.AT_PAST);
  return at;
}

/** A schedule's name made from its task: its first words, lowercased, joined by `-`. */
export function nameOfTask(task: string): string {
  const slug = task
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .slice(0, 3)
    .join('-')
    .slice(0, 32);
  return slug || 'schedule';
}

function usage(message: string): BatonError {
  return new BatonError('usage', message);
}
