/** What every press handler shares: its answer's shape and the run it names. */
import type { InboundPress } from '../../channels/types.js';
import { isRunId } from '../../core/ids.js';
import type { RunRow } from '../../store/schema.js';
import type { DispatcherDeps } from '../deps.js';

/** A press's answer, and whether it decided something (its message's buttons then give way). */
export interface PressOutcome {
  text: string;
  done: boolean;
}

/** What a press handler returns: the short answer the presser sees, or that with `done`. */
export type PressAnswer = string | PressOutcome;

export { RUN_NOT_KNOWN } from '../../wording/presses.js';

/** Whether `run` was started from the conversation the press came from. */
export function inConversation(press: InboundPress, run: RunRow): boolean {
  return run.origin.platform === press.platform && run.origin.chatId === press.chatId;
}

/** The run a press names in its `arg`, when it is one of this conversation's. */
export async function pressedRun(deps: DispatcherDeps, press: InboundPress): Promise<RunRow | undefined> {
  const run = isRunId(press.arg) ? await deps.store.runs.getRun(press.arg) : undefined;
  return run && inConversation(press, run) ? run : undefined;
}
