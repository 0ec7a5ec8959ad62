/**
 * The texts baton posts about runs (PRODUCT.md §5, §9). Every run message starts `[run hr_…]`, the
 * reader's dedupe key. Plain text: adapters send these without markup so user content can't
 * break formatting.
 */
import { formatDurationMs } from '../core/clock.js';
import type { RunRow, UsageJson } from '../store/schema.js';

const DIAGNOSTICS_TAIL_CHARS = 800;

/** `[run hr_…] started · codex · /path` */
export function startedText(run: Pick<RunRow, 'id' | 'vendor' | 'cwd'>, resumedFrom?: string, task?: { length: number; messages: number }): string {
  const resumed = resumedFrom ? ` · resuming ${resumedFrom}` : '';
  // A long task (or one joined from a split paste) states its size, so a cut paste is visible.
  const size =
    task && (task.messages > 1 || task.length >= LONG_TASK_LENGTH)
      ? ` · task: ${task.length.toLocaleString('en-US')} characters${task.messages > 1 ? ` from ${task.messages} messages` : ''}`
      : '';
  return `[run ${run.id}] started · ${run.vendor} · ${run.cwd}${resumed}${size}`;
}

/** Tasks from this many characters on have their length stated in the `started` message. */
export const LONG_TASK_LENGTH = 1000;

/** Facts of a finished run needed to describe it. */
export interface OutcomeFacts {
  run: Pick<RunRow, 'id' | 'vendor' | 'cwd' | 'createdAt'>;
  status: 'completed' | 'failed' | 'cancelled' | 'interrupted' | 'blocked';
  reason: string | null;
  endedAt: Date;
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: UsageJson | null;
  /** Last lines of stderr and notices, for failures. */
  diagnostics?: string;
  /** The exact command to resume by hand, or undefined when the run can't be resumed. */
  resumeCommand?: string | undefined;
}

/** The outcome message of a terminal run. */
export function outcomeText(facts: OutcomeFacts): string {
  const { run } = facts;
  const duration = formatDurationMs(facts.endedAt.getTime() - run.createdAt.getTime());
  const head = `[run ${run.id}] ${facts.status} · ${run.vendor} · ${run.cwd} · ${duration}`;
  switch (facts.status) {
    case 'completed': {
      const tokens = facts.usage ? ` · ${formatTokens(facts.usage)}` : '';
      const answer = facts.finalMessage?.trim() || '(The agent finished without a final message.)';
      return `${head}${tokens}\n\n${answer}`;
    }
    case 'cancelled':
      return `${head}\nCancelled by the owner${facts.reason === 'stop' ? ' (/stop)' : ''}. Nothing will be relaunched.\n${GIT_STATUS_ADVICE}`;
    case 'failed':
    case 'interrupted':
    case 'blocked': {
      const lines = [head];
      if (facts.errorMessage) lines.push(facts.errorMessage.trim());
      lines.push(`Reason: ${facts.reason ?? 'unknown'}`);
      const tail = facts.diagnostics?.trim();
      if (tail) lines.push(`Diagnostics:\n${tail.slice(-DIAGNOSTICS_TAIL_CHARS)}`);
      lines.push(facts.resumeCommand ? `Resume: ${facts.resumeCommand}` : 'Not resumable.');
      lines.push(GIT_STATUS_ADVICE);
      return lines.join('\n');
    }
  }
}

const GIT_STATUS_ADVICE = 'A stopped run may have left partial changes: check `git status` before redoing work.';

/** `1,500 tokens (1,200 in, 300 out)` */
export function formatTokens(usage: UsageJson): string {
  const n = (value: number): string => value.toLocaleString('en-US');
  return `${n(usage.inputTokens + usage.outputTokens)} tokens (${n(usage.inputTokens)} in, ${n(usage.outputTokens)} out)`;
}
