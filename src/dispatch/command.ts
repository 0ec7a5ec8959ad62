/**
 * The chat command grammar, the same on every channel. Parsing is pure: it knows
 * no platform and no trust.
 */
import type { VendorName } from '../core/vendor-name.js';
import { BatonError } from '../core/errors.js';
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
}

/** A parsed chat command. */
export type Command =
  | { kind: 'launch'; vendor: VendorName | 'default'; options: LaunchOptions; task: string }
  | { kind: 'whoami' }
  | { kind: 'help' }
  | { kind: 'runs'; runId?: string }
  | { kind: 'cancel'; runId: string }
  | { kind: 'stop' }
  | { kind: 'redeliver'; deliveryId: string }
  | { kind: 'use'; target: string }
  | { kind: 'doctor' }
  | { kind: 'unknown'; name: string }
  | { kind: 'text'; text: string };

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
      if (!rest) throw usage('/cancel needs a run id: /cancel hr_0123456789ab');
      return { kind: 'cancel', runId: rest.split(/\s+/)[0]! };
    case 'stop':
      return { kind: 'stop' };
    case 'redeliver':
      if (!rest) throw usage('/redeliver needs a dead letter’s number from /runs: /redeliver 42');
      return { kind: 'redeliver', deliveryId: rest.split(/\s+/)[0]!.replace(/^#/, '') };
    case 'doctor':
      return { kind: 'doctor' };
    case 'use':
      if (!rest) throw usage('/use needs a project alias or a path: /use app');
      return { kind: 'use', target: unquote(rest) };
    default:
      return hasSlash ? { kind: 'unknown', name } : { kind: 'text', text: trimmed };
  }
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
      if (vendor === 'codex') throw usage(APPROVE_CODEX);
      options.approve = true;
    } else if (word[1] === 'worktree') options.worktree = true;
    else options.progress = true;
    remaining = remaining.slice(word[0].length);
  }
  const task = remaining.trim();
  if (!task) throw usage(`/${name} needs a task, e.g. /${name} in:app fix the failing test`);
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
    if (option.key === 'in')
      throw usage(
        'in: cannot change on a resume: it runs in its parent’s directory. Send a new command to run elsewhere.',
      );
    applyOption(options, option.key, option.value, vendor);
    remaining = remaining.slice(option.length);
  }
  refuseUnknownOption(remaining);
  const task = remaining.trim();
  if (!task) throw usage('A reply needs a task after its options, e.g. tokens:8k continue.');
  return { options, task };
}

/** The `key:` options, in the order `/help` names them. */
const OPTION_KEYS = ['in', 'timeout', 'model', 'sandbox', 'mode', 'budget', 'turns', 'tokens'] as const;

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
  throw usage(
    `Unknown option ${shaped[1]}:.${hint} Options are ${OPTION_KEYS.map((k) => `${k}:`).join(', ')}. ` +
      'If it is part of the task, begin the task with another word.',
  );
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
  const head = /^(in|timeout|model|sandbox|mode|budget|turns|tokens):/.exec(text);
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
  if (!value) throw usage(`The option ${key}: needs a value.`);
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
        throw usage(`timeout: takes whole minutes from 1 to ${MAX_TIMEOUT_MINUTES}, e.g. timeout:45.`);
      }
      options.timeoutMinutes = minutes;
      return;
    }
    case 'sandbox':
      if (vendor === 'claude')
        throw usage('sandbox: is a codex option; claude takes mode:default|manual|acceptEdits|auto|dontAsk|plan.');
      options.posture = value;
      return;
    case 'mode':
      if (vendor === 'codex') throw usage('mode: is a claude option; codex takes sandbox:read-only|workspace-write.');
      options.posture = value;
      return;
    case 'budget': {
      if (vendor === 'codex') throw usage(CODEX_BUDGET_REFUSAL);
      const usd = /^\$?(?:\d+(?:\.\d*)?|\.\d+)$/.test(value) ? Number(value.replace(/^\$/, '')) : NaN;
      if (!(usd > 0 && usd <= MAX_BUDGET_USD))
        throw usage(`budget: takes US dollars above 0 and at most ${MAX_BUDGET_USD}, e.g. budget:2.50.`);
      options.budgetUsd = usd;
      return;
    }
    case 'turns': {
      if (vendor === 'codex') throw usage(CODEX_TURNS_REFUSAL);
      const turns = /^\d+$/.test(value) ? Number(value) : NaN;
      if (!(turns >= 1 && turns <= MAX_TURNS))
        throw usage(`turns: takes a whole number of turns from 1 to ${MAX_TURNS}, e.g. turns:20.`);
      options.maxTurns = turns;
      return;
    }
    case 'tokens': {
      const tokens = parseTokenCount(value);
      if (!(tokens >= 1 && tokens <= MAX_TOKENS))
        throw usage(
          'tokens: takes a whole number of tokens, optionally with k or M, e.g. tokens:200000 or tokens:200k.',
        );
      options.maxTokens = tokens;
      return;
    }
  }
}

/** Why `approve` is refused for codex (docs/safety.md, "Tool approvals"). */
export const APPROVE_CODEX =
  'approve is a claude option: `codex exec` has no approval channel, so codex runs keep their sandbox (sandbox:read-only|workspace-write).';

/** `200000`, `200k`, `1.5M` → tokens; NaN when malformed. */
function parseTokenCount(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(value);
  if (!match) return NaN;
  const scale = match[2] === '' ? 1 : /k/i.test(match[2]!) ? 1_000 : 1_000_000;
  const tokens = Number(match[1]) * scale;
  return Number.isInteger(tokens) ? tokens : NaN;
}

/**
 * Why `budget:` is refused for codex: codex-cli 0.171.0 has no spending flag and reports tokens,
 * never dollars (`turn.completed.usage`), so a dollar cap cannot be enforced.
 */
export const CODEX_BUDGET_REFUSAL =
  'budget: is a claude option: codex reports tokens, not dollars, so baton cannot hold it to a dollar budget. Use tokens:N (e.g. tokens:200k) to cap a codex run.';
/** Why `turns:` is refused for codex: `codex exec` has no turn limit (codex-cli 0.171.0). */
export const CODEX_TURNS_REFUSAL =
  'turns: is a claude option: codex has no turn limit. Use tokens:N (e.g. tokens:200k) to cap a codex run.';

function usage(message: string): BatonError {
  return new BatonError('usage', message);
}

/** The grammar, as `/help` answers it. */
export const HELP_TEXT = [
  'baton runs coding agents on this machine.',
  '',
  '/codex TASK, /claude TASK, /run TASK: launch a run (/run uses the default vendor)',
  '  options before TASK: in:ALIAS|PATH (quote a path with spaces: in:"/my dir")  timeout:MINUTES  model:NAME  progress',
  '  sandbox:read-only|workspace-write (codex)  mode:default|manual|acceptEdits|auto|dontAsk|plan (claude)',
  '  approve (claude; also mode:default): each tool call claude asks about comes to this chat with Allow / Allow for this run / Deny',
  '  worktree: run in a new git worktree on branch baton/RUN_ID (parallel runs on one repository)',
  '  caps: tokens:N (e.g. tokens:200k)  budget:USD and turns:N (claude)',
  'Reply to a [run …] message with a task to resume that run; key:value options may lead it (tokens:8k continue).',
  '/runs, /runs RUN_ID: recent runs, or one run',
  '/cancel RUN_ID, /stop: cancel one run, or every active run',
  '/redeliver ID: send a dead letter (listed by /runs) once more',
  '/use ALIAS|PATH: set this conversation’s default directory',
  '/doctor: the health of this baton (owner only)',
  '/whoami: your user id and this chat’s id',
].join('\n');
