/**
 * The chat command grammar, the same on every channel. Parsing is pure: it knows
 * no platform and no trust.
 */
import type { VendorName } from '../core/vendor-name.js';
import { BatonError } from '../core/errors.js';
import { VENDOR_FACTS } from '../harness/vendors/types.js';
import * as words from '../wording/commands.js';
import { scheduleNeedsId } from '../wording/schedules.js';
import { didYouMean } from '../wording/suggest.js';

/** Options a launch may carry before its task text. */
export interface LaunchOptions {
  /** `in:ALIAS|PATH` — the working directory. */
  in?: string;
  /** `timeout:MINUTES` — wall clock, 1–240. */
  timeoutMinutes?: number;
  /** `model:NAME`. */
  model?: string;
  /** `sandbox:read-only|workspace-write` (codex) or `mode:…` (claude). */
  posture?: string;
  /** `progress` — more detail in the live status (the last steps, the changed files); milestone notices where the channel cannot edit (`baton ask`). */
  progress: boolean;
  /** `approve` — the owner approves each tool call claude asks about from the chat. */
  approve?: boolean;
  /** `worktree` — run in a new git worktree on branch `baton/<run id>`. */
  worktree?: boolean;
  /** `budget:USD` — most US dollars the run may spend (claude `--max-budget-usd`), above 0. */
  budgetUsd?: number;
  /** `turns:N` — most agent turns (claude `--max-turns`), 1 to {@link MAX_TURNS}. */
  maxTurns?: number;
  /** `tokens:N` — most tokens (input + output, as the CLI reports them) the run may use, 1 to {@link MAX_TOKENS}. */
  maxTokens?: number;
  /** `verify:"CMD"` (repeatable, run in order) — shell commands run once the agent completed, replacing the project's `verify`. */
  verify?: string[];
  /** Never parsed from chat: the Run at reset button's wait, queued until this time whatever `on_quota` says. */
  notBefore?: Date;
}

/** A parsed chat command. */
export type Command =
  | { kind: 'launch'; vendor: VendorName | 'default'; options: LaunchOptions; task: string }
  | { kind: 'whoami' }
  | { kind: 'help' }
  | { kind: 'runs'; runId?: string }
  | { kind: 'cancel'; runId: string }
  | { kind: 'stop' }
  | { kind: 'new' }
  | { kind: 'redeliver'; deliveryId: string }
  | { kind: 'use'; target: string }
  | { kind: 'doctor' }
  | { kind: 'schedule'; verb: ScheduleVerb; rest: string }
  | { kind: 'unknown'; name: string }
  | { kind: 'text'; text: string };

/** The schedule commands: `/every`, `/at`, `/schedules` (`list`), `/unschedule`, `/pause`, `/resume`. */
export type ScheduleVerb = 'every' | 'at' | 'list' | 'unschedule' | 'pause' | 'resume';

const LAUNCH_COMMANDS: Record<string, VendorName | 'default'> = { codex: 'codex', claude: 'claude', run: 'default' };

/** Longest wall clock a run may ask for, in minutes. */
export const MAX_TIMEOUT_MINUTES = 240;
/** Largest `budget:USD` a run may ask for, in US dollars. */
export const MAX_BUDGET_USD = 10_000;
/** Largest `turns:N`. */
export const MAX_TURNS = 10_000;
/** Largest `tokens:N` (1e10: far past any single run, small enough to stay an exact number). */
export const MAX_TOKENS = 10_000_000_000;

/**
 * Parses one message text. Text that is not a `/command` is `{ kind: 'text' }`.
 *
 * @param allowBareCommands - Slack and Discord accept commands without the slash after a mention.
 * @throws BatonError `usage` for a launch without a task or with a malformed option.
 */
export function parseCommand(text: string, allowBareCommands = false): Command {
  const trimmed = text.trim();
  const match = /^\/?([A-Za-z_]+)(?:\s+([\s\S]*))?$/.exec(trimmed);
  const hasSlash = trimmed.startsWith('/');
  if (!match || (!hasSlash && !allowBareCommands)) return { kind: 'text', text: trimmed };
  const name = match[1]!.toLowerCase();
  const rest = (match[2] ?? '').trim();
  const launchVendor = LAUNCH_COMMANDS[name];
  if (launchVendor) return parseLaunch(launchVendor, name, rest);
  switch (name) {
    case 'whoami':
      return { kind: 'whoami' };
    case 'help':
    case 'start':
      return { kind: 'help' };
    case 'runs':
      return rest ? { kind: 'runs', runId: rest.split(/\s+/)[0]! } : { kind: 'runs' };
    case 'cancel':
      if (!rest) throw usage(words.CANCEL_NEEDS_ID);
      return { kind: 'cancel', runId: rest.split(/\s+/)[0]! };
    case 'stop':
      return { kind: 'stop' };
    case 'new':
      return { kind: 'new' };
    case 'redeliver':
      if (!rest) throw usage(words.REDELIVER_NEEDS_ID);
      return { kind: 'redeliver', deliveryId: rest.split(/\s+/)[0]!.replace(/^#/, '') };
    case 'doctor':
      return { kind: 'doctor' };
    case 'every':
    case 'at':
    case 'schedules':
    case 'unschedule':
    case 'pause':
    case 'resume':
      return hasSlash || isBareScheduleCommand(name, rest)
        ? parseSchedule(name, rest)
        : { kind: 'text', text: trimmed };
    case 'use':
      if (!rest) throw usage(words.USE_NEEDS_TARGET);
      return { kind: 'use', target: unquote(rest) };
    default:
      return hasSlash ? { kind: 'unknown', name } : { kind: 'text', text: trimmed };
  }
}

/**
 * Whether a schedule command without its slash (Slack, Discord) is one, not prose that starts
 * with its word ("resume the work", "at noon we…"): it must have the command's shape.
 */
function isBareScheduleCommand(name: string, rest: string): boolean {
  if (name === 'schedules') return rest === '';
  if (name === 'every' || name === 'at') return /(?:^|\s)\/?(?:codex|claude|run)\s/i.test(rest);
  return /^s_[0-9a-f]{8}$/.test(rest);
}

function parseSchedule(name: string, rest: string): Command {
  if (name === 'every' || name === 'at') return { kind: 'schedule', verb: name, rest };
  if (name === 'schedules') return { kind: 'schedule', verb: 'list', rest: '' };
  if (name !== 'unschedule' && name !== 'pause' && name !== 'resume') return { kind: 'unknown', name };
  if (!rest) throw usage(scheduleNeedsId(name));
  return { kind: 'schedule', verb: name, rest: rest.split(/\s+/)[0]! };
}

function parseLaunch(vendor: VendorName | 'default', name: string, rest: string): Command {
  const options: LaunchOptions = { progress: false };
  let remaining = rest;
  for (;;) {
    const option = readOption(remaining);
    if (option) {
      applyOption(options, option.key, option.value, vendor);
      remaining = remaining.slice(option.length);
      continue;
    }
    const word = /^(progress|approve|worktree)(?:\s+|$)/.exec(remaining);
    if (!word) {
      refuseUnknownOption(remaining);
      break;
    }
    if (word[1] === 'approve') {
      if (vendor !== 'default' && !VENDOR_FACTS[vendor].toolApprovals) throw usage(words.APPROVE_CODEX);
      options.approve = true;
    } else if (word[1] === 'worktree') options.worktree = true;
    else options.progress = true;
    remaining = remaining.slice(word[0].length);
  }
  const task = remaining.trim();
  if (!task) throw usage(words.launchNeedsTask(name));
  return { kind: 'launch', vendor, options, task };
}

/**
 * The options a reply to a `[run …]` message may begin with, then its task: the `key:value`
 * options of a launch, read by the same rules. The bare words (`progress`, `approve`,
 * `worktree`) are not read here: a reply is prose (“progress is slow…”), and a resume keeps
 * its parent's directory, so `in:` is refused.
 *
 * @throws BatonError `usage` for an unknown or malformed option, `in:`, or no task.
 */
export function parseReplyOptions(text: string, vendor: VendorName): { options: LaunchOptions; task: string } {
  const options: LaunchOptions = { progress: false };
  let remaining = text.trim();
  for (let option = readOption(remaining); option; option = readOption(remaining)) {
    if (option.key === 'in') throw usage(words.RESUME_KEEPS_DIRECTORY);
    applyOption(options, option.key, option.value, vendor);
    remaining = remaining.slice(option.length);
  }
  refuseUnknownOption(remaining);
  const task = remaining.trim();
  if (!task) throw usage(words.REPLY_NEEDS_TASK);
  return { options, task };
}

/** The `key:` options, in the order `/help` names them. */
const OPTION_KEYS = ['in', 'timeout', 'model', 'sandbox', 'mode', 'budget', 'turns', 'tokens', 'verify'] as const;

/**
 * An option-shaped token: a word of 2 to 20 ASCII letters (with `-`/`_` inside), a colon, and a
 * value that is neither empty (`fix: the bug`) nor a URL's `//` (`http://…`, `file:///…`).
 * Digits (`10:30`) and one letter (`C:thing`) are not option-shaped.
 */
const OPTION_SHAPED = /^([A-Za-z][A-Za-z_-]{0,18}[A-Za-z]):(?!\/\/)\S/;

/**
 * Refuses an option-shaped token at the start of `text` that is no option: were it read as task
 * text, a typo (`timout:5`) would go to the model, and the real options after it too.
 *
 * @throws BatonError `usage` naming the nearest option and the list.
 */
function refuseUnknownOption(text: string): void {
  const shaped = OPTION_SHAPED.exec(text);
  if (!shaped) return;
  const hint = didYouMean(
    `${shaped[1]!}:`,
    OPTION_KEYS.map((k) => `${k}:`),
  );
  throw usage(words.unknownOption(shaped[1]!, hint, OPTION_KEYS));
}

/**
 * Quotes an option value may be wrapped in, opening mark → the marks that may close it. Phones
 * type typographic quotes by default (iOS "Smart Punctuation" turns `"` into “ ”), and languages
 * pair them differently: „…“ (German), «…» (French), »…« (Danish), ‚…‘.
 */
const QUOTE_CLOSERS: Readonly<Record<string, string>> = {
  '"': '"',
  '“': '”“',
  '”': '”',
  '„': '“”',
  '‘': '’',
  '’': '’',
  '‚': '‘’',
  '«': '»',
  '»': '«',
};

/**
 * Reads one `key:value` option at the start of `text`; a value may be quoted to hold spaces
 * (`in:"/home/me/my project"`, also with any mark of {@link QUOTE_CLOSERS}).
 *
 * @returns the option and how many characters it took (with the whitespace after it), or
 *   undefined when `text` does not start with an option.
 */
function readOption(text: string): { key: string; value: string; length: number } | undefined {
  const head = /^(in|timeout|model|sandbox|mode|budget|turns|tokens|verify):/.exec(text);
  if (!head) return undefined;
  const key = head[1]!;
  const start = head[0].length;
  const closers = QUOTE_CLOSERS[text.charAt(start)];
  if (closers) {
    for (let end = start + 1; end < text.length; end++) {
      if (!closers.includes(text.charAt(end))) continue;
      const after = /^(?:\s+|$)/.exec(text.slice(end + 1));
      if (after) return { key, value: text.slice(start + 1, end), length: end + 1 + after[0].length };
    }
  }
  const plain = /^(\S*)(?:\s+|$)/.exec(text.slice(start))!;
  return { key, value: plain[1]!, length: start + plain[0].length };
}

/** A `/use` target wholly wrapped in one pair of quotes, without them. */
export function unquote(text: string): string {
  const closers = QUOTE_CLOSERS[text.charAt(0)];
  return closers && text.length >= 2 && closers.includes(text.charAt(text.length - 1)) ? text.slice(1, -1) : text;
}

function applyOption(options: LaunchOptions, key: string, value: string, vendor: VendorName | 'default'): void {
  if (!value) throw usage(words.optionNeedsValue(key));
  switch (key) {
    case 'in':
      options.in = value;
      return;
    case 'model':
      options.model = value;
      return;
    case 'timeout': {
      const minutes = /^\d+$/.test(value) ? Number(value) : NaN;
      if (!(minutes >= 1 && minutes <= MAX_TIMEOUT_MINUTES)) {
        throw usage(words.timeoutRange(MAX_TIMEOUT_MINUTES));
      }
      options.timeoutMinutes = minutes;
      return;
    }
    case 'sandbox':
    case 'mode':
      refuseOtherVendorsPosture(key, vendor);
      options.posture = value;
      return;
    case 'budget': {
      if (vendor !== 'default' && !VENDOR_FACTS[vendor].budgetCap) throw usage(words.CODEX_BUDGET_REFUSAL);
      const usd = /^\$?(?:\d+(?:\.\d*)?|\.\d+)$/.test(value) ? Number(value.replace(/^\$/, '')) : NaN;
      if (!(usd > 0 && usd <= MAX_BUDGET_USD)) throw usage(words.budgetRange(MAX_BUDGET_USD));
      options.budgetUsd = usd;
      return;
    }
    case 'turns': {
      if (vendor !== 'default' && !VENDOR_FACTS[vendor].turnCap) throw usage(words.CODEX_TURNS_REFUSAL);
      const turns = /^\d+$/.test(value) ? Number(value) : NaN;
      if (!(turns >= 1 && turns <= MAX_TURNS)) throw usage(words.turnsRange(MAX_TURNS));
      options.maxTurns = turns;
      return;
    }
    case 'tokens': {
      const tokens = parseTokenCount(value);
      if (!(tokens >= 1 && tokens <= MAX_TOKENS)) throw usage(words.TOKENS_SHAPE);
      options.maxTokens = tokens;
      return;
    }
    case 'verify':
      options.verify = [...(options.verify ?? []), value];
      return;
  }
}

/** `200000`, `200k`, `1.5M` → tokens; NaN when malformed. */
function parseTokenCount(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(value);
  if (!match) return NaN;
  const scale = match[2] === '' ? 1 : /k/i.test(match[2]!) ? 1_000 : 1_000_000;
  const tokens = Number(match[1]) * scale;
  return Number.isInteger(tokens) ? tokens : NaN;
}

/**
 * Refuses a posture option (`sandbox:`, `mode:`) that another vendor's CLI takes: each vendor
 * names its postures with one word ({@link VENDOR_FACTS}' `postureWord`).
 *
 * @throws BatonError `usage` naming the option's vendor and the word `vendor` takes.
 */
function refuseOtherVendorsPosture(key: string, vendor: VendorName | 'default'): void {
  if (vendor === 'default') return;
  const facts = VENDOR_FACTS[vendor];
  if (facts.postureWord === key) return;
  const owner = (Object.keys(VENDOR_FACTS) as VendorName[]).find((name) => VENDOR_FACTS[name].postureWord === key);
  throw usage(words.postureOptionOfOtherVendor(key, owner ?? key, vendor, facts.postureWord, facts.postures));
}

function usage(message: string): BatonError {
  return new BatonError('usage', message);
}
