/** `/cancel ID`. */
import type { InboundMessage } from '../../channels/types.js';
import { isRunId, type RunId } from '../../core/ids.js';
import { cancelAnswerText, NO_SUCH_RUN, QUEUED_RUN_MOVED_ON, RUN_ALREADY_ENDED } from '../../wording/dispatch.js';
import { runTag } from '../../wording/run-tag.js';
import { queuedRunCancelledText } from '../../wording/runs.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatcherDeps, DispatchResult } from '../deps.js';
import { cancelQueued, cancelRun } from './cancel-run.js';

/**
 * Cancels the run `id`, queued or active; @returns the answer to the owner.
 *
 * @throws the store's errors.
 */
export async function cancel(deps: DispatcherDeps, id: string): Promise<string> {
  const run = isRunId(id) ? await deps.store.runs.getRun(id) : undefined;
  if (!run) return NO_SUCH_RUN;
  if (run.status === 'queued')
    return (await cancelQueued(deps, run, 'owner_cancel')) ? queuedRunCancelledText(run.id) : QUEUED_RUN_MOVED_ON;
  if (run.status !== 'starting' && run.status !== 'running') return RUN_ALREADY_ENDED;
  return cancelAnswerText(runTag(run.id), await cancelRun(deps, run.id as RunId, 'owner_cancel'));
}

/** `/cancel ID`. */
export async function cancelCommand(
  ctx: DispatchContext,
  command: { runId: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  return answer(ctx, message, cancel(ctx.deps, command.runId));
}
