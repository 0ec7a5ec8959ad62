/**
 * The judge step, pure: the facts a run ended with (its stream, its exit, a launch error) become
 * its terminal state and the record written for it. Nothing here reads a file or a clock.
 */
import { isBatonError } from '../../core/errors.js';
import type { RunId } from '../../core/ids.js';
import type { ButtonJson, DocumentJson, RunRow } from '../../store/schema.js';
import { classifyExit, type Classified, type ExitFacts } from '../outcome.js';
import type { HarnessButtonLabels, HarnessWords } from '../ports.js';
import type { RunProcesses } from '../run-cgroup.js';
import type { TerminalRecord } from '../terminal-write.js';
import type { StreamFacts } from '../vendors/types.js';
import { outcomeTarget } from './outcome-target.js';
import { StoppedBeforeSpawn } from './prepare.js';
import { FIX_ACTION } from '../../core/buttons.js';
import { FIXABLE_VERIFY_REASONS, type VerificationJson } from '../../types/run-facts.js';

/** Launch errors that carry words of their own for the outcome. */
const WORDED_LAUNCH_ERRORS = ['user_unresolved', 'vendor_missing', 'task_too_long'] as const;

/**
 * What a launch that threw before its CLI ran adds to its exit facts: `shutdown` when the service
 * was stopping (its database may be closing under it: the run was interrupted, not failed with
 * words of a query), nothing for a stop before the spawn (already recorded), else a spawn failure.
 */
export function launchFailure(err: unknown, shuttingDown: boolean, words: HarnessWords): Partial<ExitFacts> {
  if (err instanceof StoppedBeforeSpawn) return {};
  if (shuttingDown) return { shutdown: true };
  const known = WORDED_LAUNCH_ERRORS.find((code) => isBatonError(err, code));
  return {
    spawnFailure:
      known && err instanceof Error
        ? { reason: known, message: err.message }
        : { reason: 'spawn_failed', message: words.startFailed(err instanceof Error ? err.message : String(err)) },
  };
}

/**
 * What the outcome says about processes that may outlive the run: the pids baton could not kill,
 * or, where runs are followed only by their process tree and the run was stopped, that a process
 * which left the tree may have survived.
 */
export function processNote(
  processes: RunProcesses | undefined,
  survivors: readonly number[],
  stopped: boolean,
  words: HarnessWords,
): string | undefined {
  if (survivors.length > 0) return words.processesSurvived(survivors);
  if (stopped && processes?.mechanism === 'tree') return words.processesMayHaveLeftTree();
  return undefined;
}

/**
 * The last few notices and stderr lines, without repeating the error already shown and without
 * codex's constant stdin notice.
 */
export function diagnosticsTail(notices: readonly string[], stderr: string, shown: string | null): string {
  const lines = [...notices.slice(-3), ...stderr.split('\n').slice(-8)]
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== shown && line !== 'Reading additional input from stdin...');
  return [...new Set(lines)].join('\n');
}

/** The run's terminal status from its stream's facts and its exit (see outcome.ts). */
export function judgeRun(facts: StreamFacts, exit: ExitFacts): Classified {
  return classifyExit(facts, exit);
}

/** What {@link terminalRecordOf} builds the record from. */
export interface JudgedRun {
  run: RunRow;
  facts: StreamFacts;
  exit: ExitFacts;
  classified: Classified;
  endedAt: Date;
  /** The outcome message's text. */
  body: string;
  documents: DocumentJson[];
  /** The labels of the outcome's buttons (the wording's). */
  labels: Pick<HarnessButtonLabels, 'resume' | 'fix' | 'runAtReset' | 'runOn'>;
  /** The other vendors installed here, for a `quota_exhausted` run's Run on … buttons. */
  otherVendors: readonly string[];
  /** How the run's verification ended; undefined when it had none. */
  verification?: VerificationJson | undefined;
}

/** The button actions under a `quota_exhausted` outcome (dispatch/presses/quota.ts acts on them). */
export const QUOTA_ACTIONS = { runAtReset: 'run_at_reset', runOn: 'run_on' } as const;

/**
 * The buttons under an outcome: for a `quota_exhausted` run, Run at reset (when the reset is known)
 * and Run on each other vendor; Resume for a failed or interrupted run with a session; Fix for a
 * completed run with a session whose verification failed (it resumes the session with the failure
 * as the task).
 */
function outcomeButtons(judged: JudgedRun, sessionId: string | undefined): ButtonJson[] {
  const { run, classified, labels, verification } = judged;
  const buttons: ButtonJson[] = [];
  if (classified.reason === 'quota_exhausted') {
    if (classified.quotaResetsAt)
      buttons.push({ label: labels.runAtReset, action: QUOTA_ACTIONS.runAtReset, arg: run.id });
    for (const vendor of judged.otherVendors)
      buttons.push({ label: labels.runOn(vendor), action: QUOTA_ACTIONS.runOn, arg: `${run.id}:${vendor}` });
    return buttons;
  }
  if (!sessionId) return buttons;
  if (classified.status === 'failed' || classified.status === 'interrupted')
    buttons.push({ label: labels.resume, action: 'resume', arg: run.id });
  else if (verification && FIXABLE_VERIFY_REASONS.has(verification.reason))
    buttons.push({ label: labels.fix, action: FIX_ACTION, arg: run.id });
  return buttons;
}

/**
 * The run's end as one record: its terminal row and its outcome message, written together.
 * Its buttons are {@link outcomeButtons}'.
 */
export function terminalRecordOf(judged: JudgedRun): TerminalRecord {
  const { run, facts, exit, classified, endedAt, body, documents, verification } = judged;
  const runId = run.id as RunId;
  const sessionId = facts.sessionId;
  const buttons = outcomeButtons(judged, sessionId);
  return {
    runId,
    terminal: {
      status: classified.status,
      reason: classified.reason,
      finalMessage: facts.finalMessage ?? null,
      errorMessage: classified.errorMessage,
      usage: facts.usage ?? null,
      denials: facts.denials ?? [],
      vendorSessionId: sessionId ?? null,
      exitCode: exit.exitCode,
      exitSignal: exit.signal,
      ...(verification ? { verification } : {}),
      ...(classified.quotaResetsAt ? { quotaResetsAt: classified.quotaResetsAt } : {}),
      endedAt,
    },
    outcome: {
      runId,
      kind: 'outcome',
      target: outcomeTarget(run),
      body,
      format: 'markdown',
      ...(documents.length > 0 ? { documents } : {}),
      ...(buttons.length > 0 ? { buttons } : {}),
    },
  };
}
