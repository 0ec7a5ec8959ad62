/** Cancelling one run, queued or active: shared by `/cancel`, `/stop` and the Stop button. */
import type { RunId } from '../../core/ids.js';
import { outcomeTarget } from '../../harness/supervisor.js';
import type { RunRow } from '../../store/schema.js';
import { cancelledWhileQueuedText } from '../../wording/runs.js';
import type { DispatcherDeps } from '../deps.js';

/** What a cancel reached (see {@link cancelRun}). */
export type CancelResult = 'cancelled' | 'requested' | 'finished' | 'unrecorded';

/** Cancels a queued run with its outcome message; false when it was no longer queued. */
export async function cancelQueued(
  deps: DispatcherDeps,
  run: RunRow,
  reason: 'owner_cancel' | 'stop',
): Promise<boolean> {
  const body = cancelledWhileQueuedText(run, reason === 'stop' ? '/stop' : undefined);
  const outcome = await deps.store.queue.cancelQueued(
    run.id,
    reason,
    { runId: run.id as RunId, kind: 'outcome', target: outcomeTarget(run), body },
    deps.clock.now(),
  );
  if (outcome) await deps.outbox.attempt(outcome);
  return outcome !== null;
}

/**
 * Cancels a run here when this process supervises it (waiting until none of its processes is
 * left), else asks its supervising process through the database.
 *
 * @returns `finished` when the run was no longer active (or ended another way before the cancel
 *   landed: its outcome says how); `unrecorded` when its processes are stopped but the database
 *   has not taken its end yet — never claimed as cancelled.
 */
export async function cancelRun(
  deps: DispatcherDeps,
  runId: RunId,
  reason: 'owner_cancel' | 'stop',
): Promise<CancelResult> {
  const here = await deps.supervisor.cancel(runId, reason);
  if (here) return here.kind === 'cancelled' ? 'cancelled' : here.kind === 'ended' ? 'finished' : 'unrecorded';
  return (await deps.store.runs.requestCancel(runId, reason)) ? 'requested' : 'finished';
}
