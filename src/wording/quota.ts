/**
 * The sentences of a plan's usage limit: the outcome's reset line, a run queued for the reset, a
 * launch refused while the vendor is at its limit, and the answers of the Run at reset and
 * Run on … buttons.
 */
import { runTag } from './run-tag.js';

/** A moment as `2026-12-04 03:02 UTC`: to the minute, the zone named, the same on every node. */
export function utcMinute(at: Date): string {
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** How `/runs` says a queued run waits for a plan's reset: `until the plan resets at 2026-12-04 03:02 UTC`. */
export function untilResetText(notBefore: Date): string {
  return `until the plan resets at ${utcMinute(notBefore)}`;
}

/** The outcome line of a `quota_exhausted` run: when the limit resets, or that the CLI did not say. */
export function quotaResetLine(resetsAt: string | undefined): string {
  return resetsAt
    ? `The plan's usage limit resets at ${utcMinute(new Date(resetsAt))}.`
    : 'The CLI did not say when the plan’s usage limit resets.';
}

/** The `started` message of a run queued until its vendor's plan resets (replaces the `started ·` part). */
export function queuedUntilResetText(startedBody: string, vendor: string, resetsAt: Date): string {
  return (
    startedBody.replace('] started · ', `] queued until ${vendor}'s plan resets at ${utcMinute(resetsAt)} · `) +
    '\nIt starts by itself then; /cancel to drop it.'
  );
}

/** Why a launch is refused while its vendor is at its plan's limit. */
export function quotaRefusedText(vendor: string, resetsAt: Date, why: 'refuse' | 'approvals' | 'no_queue'): string {
  const head = `${vendor} is at its plan's usage limit until ${utcMinute(resetsAt)}`;
  if (why === 'approvals')
    return `${head}, and a run that asks for tool approvals cannot wait queued. Send it again after the reset, or on the other CLI.`;
  if (why === 'no_queue')
    return `${head}, and [harness] queue = false, so the run cannot wait. Send it again after the reset, or on the other CLI.`;
  return `${head}; [harness] on_quota = "refuse". Send it again after the reset, or on the other CLI.`;
}

/** The Run at reset press answer. */
export function runAtResetAnswer(runId: string): string {
  return `${runTag(runId)} queued for the reset.`;
}

/** The Run on … press answer. */
export function runOnAnswer(runId: string, vendor: string): string {
  return `${runTag(runId)} started on ${vendor}.`;
}

/** doctor's line on a vendor at its plan's usage limit on this node. */
export function quotaDoctorLine(vendor: string, resetsAt: Date, onQuota: 'queue' | 'refuse'): string {
  return `at its plan's usage limit until ${utcMinute(resetsAt)}: new ${vendor} runs ${onQuota === 'queue' ? 'wait queued until then' : 'are refused until then'} ([harness] on_quota = "${onQuota}")`;
}

/** The names a person reads for the windows claude reports. */
const WINDOW_NAMES: Record<string, string> = {
  five_hour: '5-hour window',
  seven_day: 'weekly window',
  seven_day_opus: 'weekly Opus window',
  seven_day_sonnet: 'weekly Sonnet window',
  primary: '5-hour window',
  secondary: 'weekly window',
};

/** A window's name as a person reads it. */
export function windowName(window: string): string {
  return WINDOW_NAMES[window] ?? `${window} window`;
}

/** The once-per-period warning that a plan window is nearly used up. */
export function quotaWarningText(facts: {
  vendor: string;
  window: string;
  usedPercent: number;
  resetsAt: Date;
}): string {
  return `${facts.vendor}: ${Math.round(facts.usedPercent)}% of the plan's ${windowName(facts.window)} is used; it resets at ${utcMinute(facts.resetsAt)}. Runs that reach the limit end quota_exhausted.`;
}
