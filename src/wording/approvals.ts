/**
 * The words of tool approvals: the message that asks the owner, its buttons, the timeout notice,
 * the presser's answers and what claude is told about a decision. The harness takes them through
 * its `ApprovalWords` port; the wiring hands it {@link approvalWords}.
 */
import { formatDurationMs } from '../core/clock.js';
import { runTag } from './run-tag.js';

/** The approval wait in words: whole minutes as "10 minutes", anything else as a duration ("1s"). */
export function waitWords(ms: number): string {
  const minutes = ms / 60_000;
  return Number.isInteger(minutes) ? `${minutes} minute${minutes === 1 ? '' : 's'}` : formatDurationMs(ms);
}

/** The approval sentences, in the shape of the harness's `ApprovalWords` port. */
export const approvalWords = {
  runTag,
  buttons: { allow: 'Allow', allowForRun: 'Allow for this run', deny: 'Deny' },
  askHeader: (runId: string, tool: string, vendor: string): string =>
    `${runTag(runId)} ${vendor} asks to use ${tool}:\n`,
  alwaysAsksWarning: (mark: string, path: string): string =>
    `⚠ ${mark}: ${path || 'no path given'}. Such a call always asks.`,
  askFooter: (facts: { warnings: readonly string[]; waitMs: number; covers: string | undefined }): string => {
    const covers = facts.covers === undefined ? '' : ` Allow for this run covers ${facts.covers}.`;
    return `\n\n${facts.warnings.map((w) => `${w}\n`).join('')}No answer within ${waitWords(facts.waitMs)} denies it.${covers}`;
  },
  inputCutNote: (more: number, file?: string): string =>
    `\n… (${more} more characters; ${file === undefined ? '/runs shows the request' : `the whole input follows as ${file}`})`,
  wholeInputCaption: (runId: string, file: string): string =>
    `${runTag(runId)} The whole input of this tool call: ${file}`,
  timeoutNotice: (facts: { runId: string; tool: string; waitMs: number }): string =>
    `${runTag(facts.runId)} No answer within ${waitWords(facts.waitMs)}: ${facts.tool} denied.`,
  deniedByOwner: 'The owner denied this tool call from the chat.',
  deniedByTimeout: (waitMs: number): string =>
    `The owner did not answer within ${waitWords(waitMs)}, so this tool call is denied.`,
  deniedRunGone: 'The run ended before the owner answered.',
  pressed: {
    runEnded: 'That run has already ended.',
    alreadyDecided: (decision: string): string => `Already decided: ${decision}.`,
    noSuchApproval: 'No such approval.',
    denied: 'Denied.',
    allowed: 'Allowed.',
    allowedForRun: (kind: string): string => `Allowed, and ${kind} for the rest of this run.`,
  },
};
