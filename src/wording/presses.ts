/** The short answers a button press gets (a platform shows at most about 200 characters). */

/** A press naming a run that is not this conversation's (or none). */
export const RUN_NOT_KNOWN = 'That run is not known here.';
/** An approval button whose approval is not this conversation's (or none). */
export const APPROVAL_NOT_KNOWN = 'That approval is not known here.';
/** A button of a run that has ended. */
export const RUN_ALREADY_FINISHED = 'That run has already finished.';
/** Keep waiting. */
export const RUN_CONTINUES = 'The run continues.';
/** A button whose action baton no longer knows. */
export const BUTTON_GONE = 'This button no longer does anything.';
/** A press by anyone but the owner. */
export const OWNER_ONLY_BUTTONS = 'Only the owner can use these buttons.';
/** +30 min on a run another baton process supervises. */
export const EXTEND_ELSEWHERE = 'That run is supervised by another baton process; /cancel it there.';

/** +30 min on a run already at the longest wall clock, `maxMinutes`. */
export function extendCappedText(maxMinutes: number): string {
  return `The run already has the longest wall clock, ${maxMinutes} minutes.`;
}

/** +30 min done: the run's wall clock is now `minutes`, of at most `maxMinutes`. */
export function extendedText(minutes: number, maxMinutes: number): string {
  return `Wall clock now ${minutes} minutes (at most ${maxMinutes}).`;
}

/** Resume started the run `runId`. */
export function resumingText(runId: string): string {
  return `Resuming as ${runId}.`;
}

/** Restore worktree pressed on a node other than the run's `node`. */
export function worktreeOnOtherNodeText(node: string, runId: string): string {
  return `That run's worktree is on node ${node}; run baton worktrees restore ${runId} there.`;
}

/** What the Stop button reached, by the cancel's result. */
export const STOP_ANSWERS = {
  cancelled: 'Stopped.',
  requested: 'Stop requested; the outcome follows.',
  finished: RUN_ALREADY_FINISHED,
  unrecorded: 'Its processes are stopped; the database has not taken it yet.',
} as const;

/** A second press of a message's buttons: the first press's answer, if it has one yet. */
export function alreadyPressedText(earlier: string | null | undefined): string {
  return earlier ? `Already pressed: ${earlier}` : 'Already pressed; the first press is being acted on.';
}
