/** Stop, under `started` and the watchdog's advisory. */
import type { InboundPress } from '../../channels/types.js';
import type { RunId } from '../../core/ids.js';
import { cancelRun } from '../commands/cancel-run.js';
import type { DispatcherDeps } from '../deps.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';

/** Cancels the run, if it still runs. */
export async function pressStop(deps: DispatcherDeps, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(deps, press);
  if (!run) return RUN_NOT_KNOWN;
  if (run.status !== 'starting' && run.status !== 'running')
    return { text: 'That run has already finished.', done: true };
  switch (await cancelRun(deps, run.id as RunId, 'owner_cancel')) {
    case 'cancelled':
      return { text: 'Stopped.', done: true };
    case 'requested':
      return { text: 'Stop requested; the outcome follows.', done: true };
    case 'finished':
      return { text: 'That run has already finished.', done: true };
    case 'unrecorded':
      return { text: 'Its processes are stopped; the database has not taken it yet.', done: true };
  }
}
