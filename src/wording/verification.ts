/**
 * The words of a run's verification: the headline's status part, the outcome's verification
 * lines, the task a Fix press gives the agent, and what /runs shows.
 */
import { formatDurationMs } from '../core/clock.js';
import type { VerificationJson } from '../types/run-facts.js';
import { codeBlock, codeSpan, escapeMarkdown as md } from './markdown.js';

/**
 * The status part of a completed run's headline: `completed · verified`, `completed ·
 * verification failed (exit 1)`, and so on; plain `completed` without a verification.
 */
export function completedStatus(verification: VerificationJson | undefined): string {
  if (!verification) return 'completed';
  return `completed · ${verificationState(verification)}`;
}

/** The verification's state in a few words, as the headline and /runs show it. */
export function verificationState(v: VerificationJson): string {
  switch (v.reason) {
    case 'verified':
      return 'verified';
    case 'verify_failed':
      return v.exitCode !== null
        ? `verification failed (exit ${v.exitCode})`
        : `verification failed (${v.signal ?? 'killed'})`;
    case 'verify_timeout':
      return 'verification timed out';
    case 'verify_output_limit':
      return 'verification stopped (output limit)';
    case 'verify_not_run':
      return 'not verified';
  }
}

/** The outcome's lines about the verification (Markdown). */
export function verificationLines(v: VerificationJson, timeoutMinutes: number | undefined): string {
  const command = codeSpan(v.command);
  const took = formatDurationMs(v.durationMs);
  const tail = v.tail ? `\n${codeBlock(v.tail)}` : '';
  switch (v.reason) {
    case 'verified':
      return `Verified: ${v.ran > 1 ? `${v.ran} commands, the last ` : ''}${command} passed · ${took}`;
    case 'verify_failed':
      return `Verification failed: ${command} ${v.exitCode !== null ? `exited ${v.exitCode}` : `was killed by ${md(v.signal ?? 'a signal')}`} · ${took}${tail}\n${FIX_ADVICE}`;
    case 'verify_timeout':
      return `Verification timed out: ${command} was stopped at the limit of ${timeoutMinutes ?? '?'} min (verify_timeout_minutes) · ${took}${tail}\n${FIX_ADVICE}`;
    case 'verify_output_limit':
      return `Verification stopped: ${command} printed more than 4 times max_run_artifact_mb · ${took}${tail}\n${FIX_ADVICE}`;
    case 'verify_not_run':
      return v.why === 'stopped'
        ? `Not verified: the run was stopped while ${command} ran.`
        : `Not verified: ${command} could not be started (${md(v.why ?? 'unknown')}). Check the command and that the run's directory still exists.`;
  }
}

const FIX_ADVICE = 'Press Fix to have the agent fix it in the same session.';

/** The task a Fix press resumes the session with: what failed and the end of its output. */
export function fixTask(v: VerificationJson): string {
  const how =
    v.reason === 'verify_timeout'
      ? 'did not finish within its time limit'
      : v.reason === 'verify_output_limit'
        ? 'printed too much output and was stopped'
        : v.exitCode !== null
          ? `exited with code ${v.exitCode}`
          : `was killed by ${v.signal ?? 'a signal'}`;
  const output = v.tail ? `\n\nThe end of its output:\n\n${v.tail}` : '';
  return `The verification of your change failed: \`${v.command}\` ${how}.${output}\n\nFix the cause so that \`${v.command}\` passes.`;
}

/** The answer to a Fix press on a run whose verification did not fail. */
export const NOTHING_TO_FIX = 'This run’s verification did not fail; there is nothing to fix.';

/** What a Fix press answers once the fix run started. */
export function fixingText(runId: string): string {
  return `Fixing as ${runId}.`;
}
