/**
 * The one place a child's exit becomes a terminal run status: the outcome comes
 * only from the vendor's terminal event plus the exit status.
 */
import type { LeftOutFile } from './patch-filter.js';
import type { DenialJson, RunRow, RunStatus, UsageJson } from '../store/schema.js';
import type { StreamFacts } from './vendors/types.js';
import type { OutcomeDiff, OutcomeFacts } from '../types/run-facts.js';

export type { OutcomeDiff, OutcomeFacts } from '../types/run-facts.js';

/** How a run's process ended, as the supervisor saw it. */
export interface ExitFacts {
  exitCode: number | null;
  signal: string | null;
  /** The supervisor killed it for exceeding the wall clock. */
  timedOut: boolean;
  /** The owner cancelled it (`/cancel`, `/stop`): `owner_cancel` or `stop`. */
  cancelledBy?: 'owner_cancel' | 'stop';
  /**
   * The owner's cancel first asked the CLI to stop (see run/spawn.ts): `stopped` when it then
   * exited by itself within the wait, `killed` when it did not and its processes were killed.
   */
  stopAsked?: 'stopped' | 'killed';
  /** The service was shutting down. */
  shutdown?: boolean;
  /**
   * The CLI was spawned but the store would not record it as running (the database connection
   * was lost right then), so the supervisor stopped it rather than let an unrecorded process go
   * on changing the checkout.
   */
  startUnrecorded?: boolean;
  /** The supervisor killed it for a protocol or output violation: the reason code. */
  killedFor?: 'protocol' | 'output_limit';
  /**
   * The CLI is not logged in or the model server refused its credentials (a 401; the vendor's
   * `describeAuthFailure`), so the supervisor stopped it: the CLI's words and how to log it in.
   * Unless the run still completed, it ends failed/`not_logged_in`.
   */
  authFailure?: { words: string; fix: string };
  /** The session a resume asked for; the stream must report the same one. */
  resumeSessionId?: string;
  /** The last bytes of stderr, where codex says a session is gone. */
  stderrTail?: string;
  /** Processes that may outlive the run, in words (see supervisor.ts `processNote`). */
  processNote?: string | undefined;
  /** The project's instruction files the CLI was not given, one sentence each (project-instructions.ts). */
  instructionsNote?: string | undefined;
  /** Event lines left out for their length and where their raw bytes are, one sentence each. */
  streamNote?: string | undefined;
  /**
   * The CLI sent its terminal event but had not exited after the grace period, so the supervisor
   * stopped it: the outcome is judged from the terminal event, not from the exit status.
   */
  stoppedAfterTerminal?: boolean;
  /**
   * The token cap (`tokens:N`, input + output) the run had; a run whose reported usage passed it
   * ends failed/budget_exceeded, whether the supervisor stopped it or it ended on its own.
   */
  maxTokens?: number;
  /** The run never got a process: ENOENT, E2BIG, no user, no CLI. */
  spawnFailure?: { reason: 'spawn_failed' | 'user_unresolved' | 'vendor_missing' | 'task_too_long'; message: string };
}

/** A terminal status with its reason code and the words to show. */
export interface Classified {
  status: Exclude<RunStatus, 'starting' | 'running' | 'queued'>;
  /** Stable reason code, stored in `runs.reason`; null for a plain completion. */
  reason: ReasonCode | null;
  /** The vendor's own words (or ours when the vendor said nothing), for failures. */
  errorMessage: string | null;
  /** A fact about how the run ended worth a line of its own, e.g. that the CLI had to be stopped after it finished. */
  note?: string;
  /** With `quota_exhausted`: when the CLI said the plan's limit resets (ISO 8601), if it said. */
  quotaResetsAt?: string;
}

/** The note of a run whose CLI did not exit on its own after its terminal event. */
export const STOPPED_AFTER_FINISH_NOTE = 'The CLI had to be stopped after it finished.';

/**
 * Every reason code a terminal run can carry, each with one meaning (the reason table of docs/commands.md
 * lists them with what to do). `restart` is set by the reconciler, the rest by
 * {@link classifyExit}; a plain completion has none. `max_budget` is what older runs
 * stored for claude's `error_max_budget_usd`; that is now `budget_exceeded`, the code of every
 * spending cap (claude's dollar budget, baton's token cap).
 */
export const REASON_CODES = [
  'vendor_error',
  'max_turns',
  'max_budget',
  'no_terminal_event',
  'exit_status',
  'timeout',
  'protocol',
  'output_limit',
  'session_gone',
  'session_mismatch',
  'spawn_failed',
  'vendor_missing',
  'user_unresolved',
  'task_too_long',
  'owner_cancel',
  'stop',
  'shutdown',
  'restart',
  'node_lost',
  'budget_exceeded',
  'not_logged_in',
  'start_unrecorded',
  'quota_exhausted',
] as const;

/** One of {@link REASON_CODES}. */
export type ReasonCode = (typeof REASON_CODES)[number];

/** Turns stream facts and exit facts into a terminal status. */
export function classifyExit(stream: StreamFacts, exit: ExitFacts): Classified {
  if (exit.spawnFailure) {
    return { status: 'failed', reason: exit.spawnFailure.reason, errorMessage: exit.spawnFailure.message };
  }
  if (exit.startUnrecorded) {
    return {
      status: 'failed',
      reason: 'start_unrecorded',
      errorMessage:
        'The run could not be recorded as started (the database did not answer), so its CLI was stopped; check `git status` for what it changed before that.',
    };
  }
  if (exit.cancelledBy) {
    return { status: 'cancelled', reason: exit.cancelledBy, errorMessage: null };
  }
  if (exit.shutdown) {
    return {
      status: 'interrupted',
      reason: 'shutdown',
      errorMessage: 'baton was stopped while this run was active; the run was stopped and is not relaunched.',
    };
  }
  if (exit.timedOut) {
    return {
      status: 'failed',
      reason: 'timeout',
      errorMessage: 'Timed out: the run reached its wall-clock limit and was stopped.',
    };
  }
  const spent = stream.usage ? stream.usage.inputTokens + stream.usage.outputTokens : 0;
  if (exit.maxTokens !== undefined && spent > exit.maxTokens) {
    return {
      status: 'failed',
      reason: 'budget_exceeded',
      errorMessage: `The run used ${spent.toLocaleString('en-US')} tokens, over its cap of ${exit.maxTokens.toLocaleString('en-US')} (tokens:N); it was stopped when the CLI reported it.`,
    };
  }
  if (exit.killedFor === 'protocol') {
    return {
      status: 'failed',
      reason: 'protocol',
      errorMessage: 'The CLI printed more malformed lines than max_framing_errors allows; the run was stopped.',
    };
  }
  if (exit.authFailure && stream.terminal?.kind !== 'completed') {
    const { words, fix } = exit.authFailure;
    return {
      status: 'failed',
      reason: 'not_logged_in',
      errorMessage: `The CLI is not logged in or its credentials were refused (${words}); the run was stopped, since retrying cannot help. ${fix}`,
    };
  }
  if (exit.killedFor === 'output_limit') {
    return {
      status: 'failed',
      reason: 'output_limit',
      errorMessage: 'The CLI printed more than 4 times max_run_artifact_mb; the run was stopped.',
    };
  }
  if (exit.resumeSessionId) {
    const gone = /no rollout found|No conversation found/i;
    if (
      gone.test(exit.stderrTail ?? '') ||
      (stream.terminal?.kind === 'failed' && gone.test(stream.terminal.message))
    ) {
      return {
        status: 'failed',
        reason: 'session_gone',
        errorMessage: `The session ${exit.resumeSessionId} no longer exists on this machine (the CLI found no record of it). Start a new run instead.`,
      };
    }
    if (stream.sessionId && stream.sessionId !== exit.resumeSessionId) {
      return {
        status: 'failed',
        reason: 'session_mismatch',
        errorMessage: `Asked to resume session ${exit.resumeSessionId} but the CLI reported session ${stream.sessionId}; its answer is not a continuation.`,
      };
    }
  }
  const terminal = stream.terminal;
  if (!terminal) {
    // The vendor's last error line is its own words about the end, so it leads the headline;
    // other notices (retries, warnings) stay in the diagnostics tail.
    const words = stream.lastError?.trim();
    const ended = `The CLI ended without reporting an outcome: ${describeExit(exit)}.`;
    return { status: 'failed', reason: 'no_terminal_event', errorMessage: words ? `${words}\n${ended}` : ended };
  }
  const note = exit.stoppedAfterTerminal ? { note: STOPPED_AFTER_FINISH_NOTE } : {};
  if (terminal.kind === 'failed') {
    const resetsAt = terminal.reason === 'quota_exhausted' ? stream.quota?.resetsAt : undefined;
    return {
      status: 'failed',
      reason: terminal.reason ?? 'vendor_error',
      errorMessage: terminal.message,
      ...note,
      ...(resetsAt ? { quotaResetsAt: resetsAt } : {}),
    };
  }
  if (exit.stoppedAfterTerminal) return { status: 'completed', reason: null, errorMessage: null, ...note };
  if (exit.exitCode !== 0) {
    return {
      status: 'failed',
      reason: 'exit_status',
      errorMessage: `The CLI reported success but ${describeExit(exit)}.`,
    };
  }
  return { status: 'completed', reason: null, errorMessage: null };
}

function describeExit(exit: ExitFacts): string {
  if (exit.signal) return `the process was killed by ${exit.signal}`;
  return `the process exited with code ${exit.exitCode ?? 'unknown'}`;
}

/** Puts a finished run's facts into the words of its outcome message. */
export type DescribeOutcome = (facts: OutcomeFacts) => string;
