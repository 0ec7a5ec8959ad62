/** `/cancel ID`. */
import type { InboundMessage } from '../../channels/types.js';
import { isRunId, type RunId } from '../../core/ids.js';
import { UNRECORDED } from '../../wording/dispatch.js';
import { runTag } from '../../wording/run-tag.js';
import { queuedRunCancelledText } from '../../wording/runs.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatcherDeps, type DispatchResult } from '../deps.js';
import { cancelQueued, cancelRun } from './cancel-run.js';

/**
 * Cancels the run `id`, queued or active; @returns the answer to the owner.
 *
 * @throws the store's errors.
 */
export async function cancel(deps: DispatcherDeps, id: string): Promise<string> {
  const run = isRunId(id) ? await deps.store.runs.getRun(id) : undefined;
  if (!run) return 'No coding run found for that id.';
  if (run.status === 'queued')
    return (await cancelQueued(deps, run, 'owner_cancel'))
      ? queuedRunCancelledText(run.id)
      : 'That coding run has already started or finished; /cancel it again if it is active.';
  if (run.status !== 'starting' && run.status !== 'running') return 'That coding run has already finished.';
  switch (await cancelRun(deps, run.id as RunId, 'owner_cancel')) {
    case 'cancelled':
      return `${runTag(run.id)} cancelled.`;
    case 'requested':
      return `${runTag(run.id)} cancel requested from the baton process running it; its outcome follows.`;
    case 'finished':
      return 'That coding run has already finished.';
    case 'unrecorded':
      return `${runTag(run.id)} ${UNRECORDED}`;
  }
}

/** `/cancel ID`. */
export async function cancelCommand(
  ctx: DispatchContext,
  command: { runId: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  await ctx.reply(message, await cancel(ctx.deps, command.runId));
  return ANSWERED;
}
