/** `/stop`: every launch, queued run and active run of this baton ends. */
import type { InboundMessage } from '../../channels/types.js';
import type { RunId } from '../../core/ids.js';
import { stoppedText } from '../../wording/dispatch.js';
import { runTag } from '../../wording/run-tag.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';
import { cancelQueued, cancelRun } from './cancel-run.js';

/** `/stop`. */
export async function stopCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  const { deps } = ctx;
  // Launches still downloading first: /stop overtook them, and they would start after it.
  const undownloaded = ctx.downloads.stop();
  // Queued runs first, so none of them takes a slot the stop frees.
  let dropped = 0;
  for (const run of await deps.store.queue.queuedRuns()) if (await cancelQueued(deps, run, 'stop')) dropped += 1;
  const active = await deps.store.runs.activeRuns();
  let stopped = 0;
  const unrecorded: string[] = [];
  for (const run of active) {
    const result = await cancelRun(deps, run.id as RunId, 'stop');
    if (result === 'cancelled' || result === 'requested') stopped += 1;
    if (result === 'unrecorded') unrecorded.push(run.id);
  }
  await ctx.reply(
    message,
    stoppedText(
      stopped,
      dropped,
      undownloaded,
      unrecorded.map((id) => runTag(id)),
    ),
  );
  return ANSWERED;
}
