/** Plain-text views of runs for `/runs`. */
import { untilResetText, utcMinute } from '../wording/quota.js';
import { formatDurationMs } from '../core/clock.js';
import { runPlace } from '../wording/run-tag.js';
import type { ButtonJson } from '../core/buttons.js';
import type { ApprovalRow, DeliveryRow, RunRow } from '../store/schema.js';
import { toPlainText } from '../delivery/chat-markdown.js';
import { deniedCount, denialsText, formatTokens, formatUsd } from '../wording/runs.js';
import { runTag } from '../wording/run-tag.js';

/** Most bytes of a run's result `/runs hr_…` shows. */
export const RESULT_TAIL_BYTES = 4096;

/** Counts shown with the run list. */
export interface RunCounts {
  active: number;
  pendingDeliveries: number;
  deadLetters: number;
}

/** Most characters of a run's task the run list shows (its first line). */
export const LISTED_TASK_CHARS = 60;

/**
 * Recent runs with the active / pending-delivery counts, and dead letters listed apart. Each run
 * shows when it was created in the machine's time zone and the first line of its task, cut at
 * {@link LISTED_TASK_CHARS}.
 *
 * @param timeZone - an IANA zone for the times. @default the machine's zone
 * @param origins - run id → the tag of the schedule that started it (`⏰ NAME · s_…`). @default none
 */
export function formatRunList(
  runs: readonly RunRow[],
  counts: RunCounts,
  deadLetters: readonly DeliveryRow[],
  timeZone?: string,
  origins: ReadonlyMap<string, string> = new Map(),
): string {
  const head = `${counts.active} active · ${counts.pendingDeliveries} pending deliver${counts.pendingDeliveries === 1 ? 'y' : 'ies'} · ${counts.deadLetters} dead letter${counts.deadLetters === 1 ? '' : 's'}`;
  const lines = runs.map(
    (r) =>
      `${r.id} · ${r.status}${r.reason ? `/${r.reason}` : ''}${r.status === 'queued' && r.notBefore ? ` ${untilResetText(r.notBefore)}` : ''}${r.verifyReason ? ` · ${r.verifyReason}` : ''} · ${r.vendor} · ${runPlace(r)} · ${formatLocalTime(r.createdAt, timeZone)}${origins.has(r.id) ? ` · ${origins.get(r.id)!}` : ''} · ${firstLine(r.task, LISTED_TASK_CHARS)}`,
  );
  const out = [head, ...(lines.length > 0 ? ['', 'Recent runs:', ...lines] : ['', 'No coding runs yet.'])];
  if (deadLetters.length > 0) {
    out.push('', 'Dead letters (never sent; kept for you):');
    for (const d of deadLetters)
      out.push(
        `#${d.id} · ${d.runId ?? 'no run'} · ${d.kind} · ${d.attempts} attempts · ${d.lastError ?? ''} · ${d.body.split('\n')[0]!.slice(0, 80)}`,
      );
    out.push('/redeliver ID (or its button) sends one again.');
  }
  return out.join('\n');
}

/** A Redeliver button per listed dead letter, at most `max`. */
export function redeliverButtons(deadLetters: readonly DeliveryRow[], max = 5): ButtonJson[] {
  return deadLetters
    .slice(0, max)
    .map((d) => ({ label: `Redeliver #${d.id}`, action: 'redeliver', arg: String(d.id) }));
}

/**
 * One run in detail, with the tail of its result, the tool calls the CLI denied, and its tool
 * approvals: tool, input on one line, when asked, and who decided what, when. Times
 * are in `timeZone` (the machine's when omitted), as in {@link formatRunList}.
 */
export function formatRun(
  run: RunRow,
  deliveries: readonly DeliveryRow[],
  approvals: readonly ApprovalRow[] = [],
  timeZone?: string,
  origin?: string,
): string {
  const lines = [
    `${runTag(run.id)} ${run.status}${run.reason ? ` · ${run.reason}` : ''}${run.denials.length > 0 ? ` · ${deniedCount(run.denials.length)}` : ''}`,
    `vendor: ${run.vendor}`,
    ...(origin ? [`origin: ${origin}`] : []),
    `cwd: ${run.cwd}`,
    ...(run.node ? [`node: ${run.node}`] : []),
    `timeout: ${run.options.timeoutMinutes} min`,
    `task: ${firstLine(run.task, LISTED_TASK_CHARS * 2)}`,
    `created: ${formatLocalTime(run.createdAt, timeZone)}`,
  ];
  if (run.status === 'queued' && run.notBefore) lines.push(`waits: ${untilResetText(run.notBefore)}`);
  if (run.quotaResetsAt) lines.push(`plan resets: ${utcMinute(run.quotaResetsAt)}`);
  if (run.startedAt) lines.push(`started: ${formatLocalTime(run.startedAt, timeZone)}`);
  if (run.endedAt)
    lines.push(
      `ended: ${formatLocalTime(run.endedAt, timeZone)} (${formatDurationMs(run.endedAt.getTime() - run.createdAt.getTime())})`,
    );
  if (run.branch)
    lines.push(`branch: ${run.branch} (worktree ${run.worktreeRoot}, from ${run.sourceRoot ?? 'unknown'})`);
  const caps = capsText(run.options);
  if (caps) lines.push(`caps: ${caps}`);
  const verify = verifyLine(run);
  if (verify) lines.push(verify);
  if (run.usage) lines.push(`usage: ${formatTokens(run.usage)}`);
  if (run.vendorSessionId) lines.push(`session: ${run.vendorSessionId}`);
  const pending = deliveries.filter((d) => d.status === 'pending').length;
  const dead = deliveries.filter((d) => d.status === 'dead').length;
  lines.push(`deliveries: ${deliveries.length - pending - dead} delivered, ${pending} pending, ${dead} dead`);
  const result = run.status === 'completed' ? run.finalMessage : run.errorMessage;
  if (result) lines.push('', tailBytes(result, RESULT_TAIL_BYTES));
  // This view is plain text; the denials are written for an outcome's Markdown.
  if (run.denials.length > 0) lines.push('', toPlainText(denialsText(run.denials, run.options.approve === true)));
  if (approvals.length > 0) {
    lines.push('', 'Approvals:');
    for (const a of approvals) {
      const input =
        typeof a.input['command'] === 'string'
          ? a.input['command']
          : typeof a.input['file_path'] === 'string'
            ? a.input['file_path']
            : JSON.stringify(a.input);
      const decided = a.decision
        ? `${a.decision} by ${a.decidedBy ?? '?'} at ${a.decidedAt?.toISOString() ?? '?'}`
        : 'waiting for the owner';
      lines.push(`#${a.id} · ${a.tool}: ${oneLine(input, 120)} · asked ${a.requestedAt.toISOString()} · ${decided}`);
    }
  }
  return lines.join('\n');
}

/**
 * `2026-11-29 09:00 CET`: a time to the minute in `timeZone` (the machine's when omitted), with the
 * zone's short name, so a reader in the owner's zone needs no arithmetic.
 */
export function formatLocalTime(date: Date, timeZone?: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    ...(timeZone ? { timeZone } : {}),
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  }).formatToParts(date);
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')} ${part('hour')}:${part('minute')} ${part('timeZoneName')}`;
}

/** The first non-empty line of `text`, at most `maxChars` characters, marked when cut. */
function firstLine(text: string, maxChars: number): string {
  const lines = text.trim().split('\n');
  const line = (lines[0] ?? '').trim();
  const cut = line.length > maxChars || lines.length > 1;
  return line.length > maxChars ? `${line.slice(0, maxChars - 1)}…` : cut ? `${line} …` : line;
}

function oneLine(text: string, maxChars: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= maxChars ? line : `${line.slice(0, maxChars - 1)}…`;
}

/** `budget $2.50, 20 turns, 200,000 tokens`: the spending caps a run had, or '' for none. */
export function capsText(options: RunRow['options']): string {
  const caps: string[] = [];
  if (options.budgetUsd !== undefined) caps.push(`budget ${formatUsd(options.budgetUsd)}`);
  if (options.maxTurns !== undefined) caps.push(`${options.maxTurns} turns`);
  if (options.maxTokens !== undefined) caps.push(`${options.maxTokens.toLocaleString('en-US')} tokens`);
  return caps.join(', ');
}

/** The last `maxBytes` UTF-8 bytes of `text`, never cutting a character. */
export function tailBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return text;
  let start = bytes.length - maxBytes;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start += 1;
  return `…${bytes.subarray(start).toString('utf8')}`;
}

/** `verify: npm test; npm run lint (config, 15 min) → verify_failed: exit 1 · 3s`; undefined without a plan. */
function verifyLine(run: RunRow): string | undefined {
  const plan = run.options.verify;
  if (!plan) return undefined;
  const head = `verify: ${plan.commands.join('; ')} (${plan.source}, ${plan.timeoutMinutes} min)`;
  const v = run.verification;
  if (!v) return head;
  const exit = v.exitCode !== null ? `exit ${v.exitCode}` : (v.signal ?? v.why ?? 'no exit');
  return `${head} → ${v.reason}: ${oneLine(v.command, 80)}, ${exit} · ${formatDurationMs(v.durationMs)}`;
}
