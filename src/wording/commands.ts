/**
 * The sentences of the chat command grammar: `/help`, and why a command or an option is refused.
 * The parser decides; these say it.
 */

/** Why `approve` is refused for codex (docs/safety.md, "Tool approvals"). */
export const APPROVE_CODEX =
  'approve is a claude option: `codex exec` has no approval channel, so codex runs keep their sandbox (sandbox:read-only|workspace-write).';

/**
 * Why `budget:` is refused for codex: codex-cli 0.171.0 has no spending flag and reports tokens,
 * never dollars (`turn.completed.usage`), so a dollar cap cannot be enforced.
 */
export const CODEX_BUDGET_REFUSAL =
  'budget: is a claude option: codex reports tokens, not dollars, so baton cannot hold it to a dollar budget. Use tokens:N (e.g. tokens:200k) to cap a codex run.';

/** Why `turns:` is refused for codex: `codex exec` has no turn limit (codex-cli 0.171.0). */
export const CODEX_TURNS_REFUSAL =
  'turns: is a claude option: codex has no turn limit. Use tokens:N (e.g. tokens:200k) to cap a codex run.';

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
  '  verify:"npm test": run it once the agent completed (repeat for more; replaces the project’s verify)',
  'Reply to a [run …] message with a task to resume that run; key:value options may lead it (tokens:8k continue).',
  'A plain message continues this conversation: it resumes its latest run, or starts one with the default vendor; /new starts afresh.',
  '/runs, /runs RUN_ID: recent runs, or one run',
  '/cancel RUN_ID, /stop: cancel one run, or every active run',
  '/redeliver ID: send a dead letter (listed by /runs) once more',
  '/use ALIAS|PATH: set this conversation’s default directory',
  '/every CRON|PHRASE /codex TASK, /at TIME|+DURATION /codex TASK: a schedule (owner only); /schedules, /pause ID, /resume ID, /unschedule ID',
  '/doctor: the health of this baton (owner only)',
  '/whoami: your user id and this chat’s id',
].join('\n');

/** `/cancel` without a run id. */
export const CANCEL_NEEDS_ID = '/cancel needs a run id: /cancel hr_0123456789ab';
/** `/redeliver` without a dead letter's number. */
export const REDELIVER_NEEDS_ID = '/redeliver needs a dead letter’s number from /runs: /redeliver 42';
/** `/use` without a target. */
export const USE_NEEDS_TARGET = '/use needs a project alias or a path: /use app';
/** A reply that tries to move its run with `in:`. */
export const RESUME_KEEPS_DIRECTORY =
  'in: cannot change on a resume: it runs in its parent’s directory. Send a new command to run elsewhere.';
/** A reply with options and no task. */
export const REPLY_NEEDS_TASK = 'A reply needs a task after its options, e.g. tokens:8k continue.';

/** A launch command (`name` without its slash) with no task. */
export function launchNeedsTask(name: string): string {
  return `/${name} needs a task, e.g. /${name} in:app fix the failing test`;
}

/** A `key:` option with nothing after the colon. */
export function optionNeedsValue(key: string): string {
  return `The option ${key}: needs a value.`;
}

/** `timeout:` outside 1 to `maxMinutes` whole minutes. */
export function timeoutRange(maxMinutes: number): string {
  return `timeout: takes whole minutes from 1 to ${maxMinutes}, e.g. timeout:45.`;
}

/** `budget:` outside (0, `maxUsd`] US dollars. */
export function budgetRange(maxUsd: number): string {
  return `budget: takes US dollars above 0 and at most ${maxUsd}, e.g. budget:2.50.`;
}

/** `turns:` outside 1 to `maxTurns`. */
export function turnsRange(maxTurns: number): string {
  return `turns: takes a whole number of turns from 1 to ${maxTurns}, e.g. turns:20.`;
}

/** `tokens:` that is no whole count. */
export const TOKENS_SHAPE =
  'tokens: takes a whole number of tokens, optionally with k or M, e.g. tokens:200000 or tokens:200k.';

/**
 * A posture option of another vendor: `key` (`sandbox`, `mode`) belongs to `owner`, while
 * `vendor` names its postures with `postureWord`.
 */
export function postureOptionOfOtherVendor(
  key: string,
  owner: string,
  vendor: string,
  postureWord: string,
  postures: readonly string[],
): string {
  return `${key}: is a ${owner} option; ${vendor} takes ${postureWord}:${postures.join('|')}.`;
}

/**
 * An option-shaped word that is no option. `hint` is a did-you-mean sentence (leading space) or
 * empty; `keys` the options in `/help` order.
 */
export function unknownOption(word: string, hint: string, keys: readonly string[]): string {
  return (
    `Unknown option ${word}:.${hint} Options are ${keys.map((k) => `${k}:`).join(', ')}. ` +
    'If it is part of the task, begin the task with another word.'
  );
}
