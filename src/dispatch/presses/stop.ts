/** Stop, under `started` and the watchdog's advisory. */
import type { InboundPress } from '../../channels/types.js';
import type { RunId } from '../../core/ids.js';
import { RUN_ALREADY_FINISHED, STOP_ANSWERS } from '../../wording/presses.js';
import { cancelRun } from '../commands/cancel-run.js';
import type { DispatcherDeps } from '../deps.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';

/** Cancels the run, if it still runs. */
export async function pressStop(deps: DispatcherDeps, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(deps, press);
  if (!run) return RUN_NOT_KNOWN;
  if (run.status !== 'starting' && run.status !== 'running') return { text: RUN_ALREADY_FINISHED, done: true };
  return { text: STOP_ANSWERS[await cancelRun(deps, run.id as RunId, 'owner_cancel')], done: true };
}
