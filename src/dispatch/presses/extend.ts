/** +30 min, under the watchdog's advisory. */
import { EXTEND_ELSEWHERE, extendCappedText, extendedText, RUN_ALREADY_FINISHED } from '../../wording/presses.js';
import type { InboundPress } from '../../channels/types.js';
import type { RunId } from '../../core/ids.js';
import { MAX_TIMEOUT_MINUTES } from '../command.js';
import type { DispatcherDeps } from '../deps.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';

/** What the "+30 min" button adds to a run's wall clock, in ms. */
export const EXTEND_MS = 30 * 60_000;

/** Extends the run's wall clock by {@link EXTEND_MS}, up to {@link MAX_TIMEOUT_MINUTES}. */
export async function pressExtend(deps: DispatcherDeps, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(deps, press);
  if (!run) return RUN_NOT_KNOWN;
  // A finished run's advisory has nothing left to decide: its buttons give way.
  if (run.status !== 'starting' && run.status !== 'running') return { text: RUN_ALREADY_FINISHED, done: true };
  const extended = deps.supervisor.extend(run.id as RunId, EXTEND_MS);
  if (extended === false) return EXTEND_ELSEWHERE;
  if (extended === 'capped') return extendCappedText(MAX_TIMEOUT_MINUTES);
  const minutes = Math.round(extended / 60_000);
  await deps.store.runs.setTimeoutMinutes(run.id, minutes);
  return { text: extendedText(minutes, MAX_TIMEOUT_MINUTES), done: true };
}
