/**
 * The texts baton posts about runs. Every run message starts `[run hr_…]`, the
 * reader's dedupe key. The `started` and status texts are plain; an outcome is Markdown (its
 * delivery's format is `markdown`): the agent's answer as the agent wrote it, diff stats and
 * diagnostics in code blocks, commands in code, and every other text from outside escaped, so it
 * shows as written.
 */
import { quotaResetLine } from './quota.js';
import { formatDurationMs } from '../core/clock.js';
import { runPlace, runTag } from './run-tag.js';
import type { DenialJson, OutcomeDiff, OutcomeFacts, RunFacts, StatusFacts, UsageJson } from '../types/run-facts.js';
import { codeBlock, codeSpan, escapeMarkdown as md } from './markdown.js';
import { completedStatus, verificationLines } from './verification.js';

const DIAGNOSTICS_TAIL_CHARS = 800;

/**
 * `[run hr_…] started · codex · /path[ · resuming hr_…][ · task: N characters[ from M messages]][ · with shot.png (12 KB)]`
 */
export function startedText(
  run: Pick<RunFacts, 'id' | 'vendor' | 'cwd'> & Partial<Pick<RunFacts, 'node' | 'origin'>>,
  resumedFrom?: string,
  task?: { length: number; messages: number },
  attachments?: string,
  branch?: string,
): string {
  const resumed = resumedFrom ? ` · resuming ${resumedFrom}` : '';
  // A long task (or one joined from a split paste) states its size, so a cut paste is visible.
  const size =
    task && (task.messages > 1 || task.length >= LONG_TASK_LENGTH)
      ? ` · task: ${task.length.toLocaleString('en-US')} characters${task.messages > 1 ? ` from ${task.messages} messages` : ''}`
      : '';
  const files = attachments ? ` · with ${attachments}` : '';
  const onBranch = branch ? ` · branch ${branch}` : '';
  return `${runTag(run.id)} started · ${run.vendor} · ${runPlace(run)}${onBranch}${resumed}${size}${files}`;
}

/**
 * The answer to a launch that has to wait: `[run hr_…] queued behind hr_…, 1 ahead ·
 * codex · /path`, from its `started` text.
 */
export function queuedText(startedBody: string, place: { behind: string; ahead: number }): string {
  return (
    startedBody.replace('] started · ', `] queued behind ${place.behind}, ${place.ahead} ahead · `) +
    '\nIt starts by itself when its turn comes; /cancel to drop it.'
  );
}

/** Tasks from this many characters on have their length stated in the `started` message. */
export const LONG_TASK_LENGTH = 1000;

export type { OutcomeFacts, StatusFacts } from '../types/run-facts.js';

/** Most denied tool calls listed in a message; the count covers them all. */
export const MAX_LISTED_DENIALS = 5;
/** Most lines of the last agent message a failed run's outcome shows. */
const LAST_MESSAGE_LINES = 6;
/** Most characters of the last agent message a failed run's outcome shows. */
const LAST_MESSAGE_CHARS = 600;

/** How a cancelled agent that was asked to stop took it, with its last message; '' when it was not asked. */
function stopAskedText(facts: OutcomeFacts): string {
  if (!facts.stopAsked) return '';
  const how =
    facts.stopAsked === 'stopped'
      ? 'Asked to stop, the agent stopped by itself.'
      : 'Asked to stop, the agent had not stopped within 5 s, so it was killed.';
  const last = facts.finalMessage?.trim();
  return `\n${how}${last ? `\nLast agent message:\n${clipLines(last, LAST_MESSAGE_LINES, LAST_MESSAGE_CHARS)}` : ''}`;
}

/**
 * The outcome message of a terminal run. Denied tool calls are counted in the
 * headline and listed in the body whatever the status, so a run that "completed" after the CLI
 * refused its writes never reads as done in silence.
 */
export function outcomeText(facts: OutcomeFacts): string {
  return [
    outcomeBody(facts),
    facts.streamNote && md(facts.streamNote),
    facts.instructionsNote && md(facts.instructionsNote),
    facts.processNote && md(facts.processNote),
  ]
    .filter(Boolean)
    .join('\n');
}

function outcomeBody(facts: OutcomeFacts): string {
  const { run } = facts;
  const duration = formatDurationMs(facts.endedAt.getTime() - run.createdAt.getTime());
  const denials = facts.denials ?? [];
  const denied = denials.length > 0 ? ` · ${deniedCount(denials.length)}` : '';
  const place = md(runPlace(run));
  switch (facts.status) {
    case 'completed': {
      const tokens = facts.usage ? ` · ${formatTokens(facts.usage)}` : '';
      const status = completedStatus(facts.verification);
      const head = `${runTag(run.id)} ${status} · ${run.vendor} · ${place} · ${duration}${tokens}${denied}`;
      const answer = facts.finalMessage?.trim() || '(The agent finished without a final message.)';
      const lines = [head];
      if (facts.verification) lines.push(verificationLines(facts.verification, run.options?.verify?.timeoutMinutes));
      if (facts.worktree) lines.push(worktreeLine(facts.worktree));
      if (facts.note) lines.push(md(facts.note));
      if (denials.length > 0) lines.push(denialsText(denials, run.options?.approve === true));
      if (facts.diff) lines.push(diffText(facts.diff));
      return `${lines.join('\n')}\n\n${answer}`;
    }
    case 'cancelled': {
      const head = `${runTag(run.id)} cancelled · ${run.vendor} · ${place} · ${duration}${denied}`;
      const branch = facts.worktree ? `\n${worktreeLine(facts.worktree)}` : '';
      const diff = facts.diff ? `\n${diffText(facts.diff)}` : '';
      return `${head}${branch}\nCancelled by the owner${facts.reason === 'stop' ? ' (/stop)' : ''}. Nothing will be relaunched.${stopAskedText(facts)}${diff}\n${GIT_STATUS_ADVICE}`;
    }
    case 'failed':
    case 'interrupted':
    case 'blocked': {
      const spent = facts.usage ? ` · ${formatTokens(facts.usage)}` : '';
      const lines = [`${runTag(run.id)} ${facts.status} · ${run.vendor} · ${place} · ${duration}${spent}${denied}`];
      if (facts.errorMessage) lines.push(md(facts.errorMessage.trim()));
      lines.push(`Reason: ${md(facts.reason ?? 'unknown')}`);
      if (facts.reason === 'quota_exhausted') lines.push(md(quotaResetLine(facts.quotaResetsAt)));
      if (facts.worktree) lines.push(worktreeLine(facts.worktree));
      if (facts.note) lines.push(md(facts.note));
      const last = facts.finalMessage?.trim();
      // The agent's own words, in its Markdown; a code block the clip cut is closed by the renderer.
      if (last) lines.push(`Last agent message:\n${clipLines(last, LAST_MESSAGE_LINES, LAST_MESSAGE_CHARS)}`);
      if (denials.length > 0) lines.push(denialsText(denials, run.options?.approve === true));
      const tail = facts.diagnostics?.trim();
      if (tail) lines.push(`Diagnostics:\n${codeBlock(tail.slice(-DIAGNOSTICS_TAIL_CHARS))}`);
      if (facts.diff) lines.push(diffText(facts.diff));
      // A CLI that is not logged in has no session worth resuming: the fix is to log it in.
      if (facts.reason !== 'not_logged_in')
        lines.push(facts.resumeCommand ? `Resume: ${codeSpan(facts.resumeCommand)}` : 'Not resumable.');
      lines.push(GIT_STATUS_ADVICE);
      return lines.join('\n');
    }
  }
}

/**
 * What the run changed: `Changes (full diff in hr_….patch):` and the `git diff --stat` lines, or
 * why the patch is not attached.
 */
export function diffText(diff: OutcomeDiff): string {
  const where = diff.patchFilename
    ? ` (full diff in ${md(diff.patchFilename)})`
    : diff.patchMissing
      ? ` (${md(diff.patchMissing)})`
      : '';
  const lines = [`Changes${where}:\n${codeBlock(diff.stat)}`];
  if (diff.leftOut?.length) {
    const why = {
      ignored_before: 'ignored before the run',
      secret_name: 'a secret file name',
      secret_content: 'looks like it holds a secret',
    } as const;
    // A file name is the repository's text: control and format characters are shown escaped.
    const shown = diff.leftOut.slice(0, LEFT_OUT_SHOWN).map((f) => `${visiblePath(f.path)} (${why[f.why]})`);
    const more = diff.leftOut.length > LEFT_OUT_SHOWN ? [`… and ${diff.leftOut.length - LEFT_OUT_SHOWN} more`] : [];
    lines.push(
      `Left out of the patch:\n${codeBlock([...shown, ...more].join('\n'))}${diff.includeCommand ? `\nTo get them, on the machine: ${codeSpan(diff.includeCommand)}` : ''}`,
    );
  }
  return lines.join('\n');
}

/** `path` as is, or quoted with its control and format characters (bidi overrides too) as `\uXXXX`. */
function visiblePath(path: string): string {
  if (!/[\p{Cc}\p{Cf}]/u.test(path)) return path;
  return `"${path.replace(/[\p{Cc}\p{Cf}"\\]/gu, (c) => (c === '"' || c === '\\' ? `\\${c}` : `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`))}"`;
}

/** Left-out files named in an outcome; the rest are counted. */
const LEFT_OUT_SHOWN = 10;

/** `Branch: baton/hr_… (2 files changed, 5 insertions(+), 1 new file)`: where a worktree run's work is. */
export function worktreeLine(worktree: NonNullable<OutcomeFacts['worktree']>): string {
  return `Branch: ${md(worktree.branch)} (${md(worktree.changes ?? 'no changes')})`;
}

/** `1 tool call denied`, `3 tool calls denied`. */
export function deniedCount(count: number): string {
  return `${count} tool call${count === 1 ? '' : 's'} denied`;
}

/**
 * The denied calls, at most {@link MAX_LISTED_DENIALS}, one line each, with how to allow writes.
 * The mode names are claude's `--permission-mode` values (claude 2.1.197 and 2.1.332).
 */
export function denialsText(denials: readonly DenialJson[], approvals = false): string {
  const listed = denials
    .slice(0, MAX_LISTED_DENIALS)
    .map((d) => `- ${md(d.tool)}${d.detail ? `: ${codeSpan(d.detail)}` : ''}`);
  const more = denials.length > MAX_LISTED_DENIALS ? [`- and ${denials.length - MAX_LISTED_DENIALS} more`] : [];
  return [
    denials.length === 1
      ? 'The CLI denied this tool call; what it was for was not done:'
      : `The CLI denied these ${denials.length} tool calls; what they were for was not done:`,
    ...listed,
    ...more,
    approvals
      ? 'They were denied in the chat (Deny, or no answer in time); Allow lets such a call run next time.'
      : 'To let claude write files in the project, add `mode:acceptEdits` to the request (baton ask takes it too).',
  ].join('\n');
}

/** The first `maxLines` lines of `text`, at most `maxChars` characters, marked when cut. */
function clipLines(text: string, maxLines: number, maxChars: number): string {
  const lines = text.split('\n');
  let clipped = lines.slice(0, maxLines).join('\n');
  let cut = lines.length > maxLines;
  if (clipped.length > maxChars) {
    clipped = clipped.slice(0, maxChars - 1);
    cut = true;
  }
  return cut ? `${clipped.trimEnd()}…` : clipped;
}

const GIT_STATUS_ADVICE = 'A stopped run may have left partial changes: check `git status` before redoing work.';

/** `1,500 tokens (1,200 in, 300 out)`, with `, $0.0123` where the CLI reported a cost (claude). */
export function formatTokens(usage: UsageJson): string {
  const n = (value: number): string => value.toLocaleString('en-US');
  const cost = usage.costUsd !== undefined ? `, ${formatUsd(usage.costUsd)}` : '';
  return `${n(usage.inputTokens + usage.outputTokens)} tokens (${n(usage.inputTokens)} in, ${n(usage.outputTokens)} out${cost})`;
}

/** `$2.50`, `$0.0123`: cents for a dollar or more, four decimals below. */
export function formatUsd(usd: number): string {
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`;
}

/** Most changed file names a `progress` run's status lists. */
const LISTED_FILES = 10;

/**
 * The status lines edited below a run's `started` text:
 * `running · 1m 05s · step: running npm test · 2 files changed · 12,400 tokens`, or when it has
 * ended `completed · 1m 12s · 2 files changed · 9,600 tokens (8,400 in, 1,200 out)` (a failure
 * names its reason: `failed (timeout) · …`). A `progress` run adds the last steps and the names
 * of the changed files.
 */
export function statusText(facts: StatusFacts): string {
  const live = facts.live;
  const files = live?.filesChanged ?? [];
  const ended = facts.status !== 'running';
  const head = ended && facts.reason ? `${facts.status} (${facts.reason})` : facts.status;
  const fields = [head, formatDurationMs(facts.elapsedMs)];
  if (!ended && live?.step) fields.push(`step: ${live.step}`);
  if (files.length > 0)
    fields.push(`${files.length.toLocaleString('en-US')} file${files.length === 1 ? '' : 's'} changed`);
  if (ended && facts.usage) fields.push(formatTokens(facts.usage));
  else if (live && live.tokens > 0) fields.push(`${live.tokens.toLocaleString('en-US')} tokens`);
  const lines = [fields.join(' · ')];
  if (facts.detail && live) {
    if (live.recentSteps.length > 0)
      lines.push(...(ended ? ['last steps:'] : ['recent steps:']), ...live.recentSteps.map((s) => `- ${s}`));
    if (files.length > 0) {
      const more =
        files.length > LISTED_FILES ? ` and ${(files.length - LISTED_FILES).toLocaleString('en-US')} more` : '';
      lines.push(`files: ${files.slice(0, LISTED_FILES).join(', ')}${more}`);
    }
  }
  return lines.join('\n');
}

/**
 * The outcome of a run cancelled before it started:
 * `[run hr_…] cancelled · codex · /path · while queued` and why nothing follows.
 *
 * @param stopCommand - the stop command that cancelled it (`/stop` in a chat, `baton stop` on
 *   the machine), or undefined for a `/cancel` of this run alone.
 */
export function cancelledWhileQueuedText(run: Pick<RunFacts, 'id' | 'vendor' | 'cwd'>, stopCommand?: string): string {
  const by = stopCommand ? ` (${stopCommand})` : '';
  return `${runTag(run.id)} cancelled · ${run.vendor} · ${run.cwd} · while queued\nCancelled by the owner${by} before it started. Nothing will be relaunched.`;
}

/** The answer to the `/cancel` of a queued run: `[run hr_…] cancelled (it was queued and never started).` */
export function queuedRunCancelledText(runId: string): string {
  return `${runTag(runId)} cancelled (it was queued and never started).`;
}
