/**
 * A message for a run still at work: added to its running turn when its CLI takes messages
 * while it runs; else (its last turn had ended, or its CLI takes none) it becomes a resumed run
 * once the run has ended, and the answer says so. Nothing is lost: the message's inbound event
 * stays claimed until that resumed run is recorded, so a restart in between handles it again.
 */
import type { InboundMessage } from '../../channels/types.js';
import { BatonError, isBatonError } from '../../core/errors.js';
import type { RunId } from '../../core/ids.js';
import type { RunRow } from '../../store/schema.js';
import { steerAddedText, steerDeferredText, steerDroppedText, steerElsewhereText } from '../../wording/converse.js';
import { runTag } from '../../wording/run-tag.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';

/**
 * Adds `text` to `run`'s running turn, or defers it to a resumed run (see the module's TSDoc).
 *
 * @throws BatonError `resume_refused` when another baton process supervises the run.
 */
export async function steerRun(
  ctx: DispatchContext,
  message: InboundMessage,
  run: RunRow,
  text: string,
): Promise<DispatchResult> {
  const { deps } = ctx;
  const tag = runTag(run.id);
  const reached = await deps.supervisor.steer(run.id as RunId, text);
  if (reached === false) throw new BatonError('resume_refused', steerElsewhereText(tag, run.id));
  if (reached === 'added') {
    deps.logger.info({ runId: run.id, chars: text.length }, 'message added to the running turn');
    await ctx.reply(message, steerAddedText(tag));
    return ANSWERED;
  }
  await ctx.reply(message, steerDeferredText(tag, reached));
  void resumeOnceEnded(ctx, message, run, text);
  return { kind: 'deferred' };
}

/**
 * Waits for `run`'s end, then launches its resume with `text` as the task (whose launch records
 * the inbound event); a run that was cancelled meanwhile is not resumed, and the answer says so.
 * A refusal is answered and the event marked handled; an infrastructure
 * failure is logged and leaves the event claimed, for the next start to handle.
 */
async function resumeOnceEnded(ctx: DispatchContext, message: InboundMessage, run: RunRow, text: string) {
  const { deps } = ctx;
  try {
    await deps.supervisor.ended(run.id as RunId);
    const parent = (await deps.store.runs.getRun(run.id)) ?? run;
    // A cancel (the owner's /cancel, /stop or Stop) ends the session's work: nothing more runs.
    if (parent.status === 'cancelled') {
      await ctx.reply(message, steerDroppedText(runTag(run.id)));
      await deps.store.inbox.markInboundHandled(message.platform, message.dedupeKey);
      return;
    }
    await ctx.launch(parent.vendor, { progress: false }, text, message, parent);
  } catch (err) {
    if (!isBatonError(err)) {
      deps.logger.warn({ err, runId: run.id }, 'could not start the resumed run of a message; the next start retries');
      return;
    }
    if (err.code === 'duplicate_inbound') return;
    try {
      await ctx.reply(message, err.message);
      await deps.store.inbox.markInboundHandled(message.platform, message.dedupeKey);
    } catch (replyErr) {
      deps.logger.warn({ err: replyErr, runId: run.id }, 'could not answer a refused resumed run');
    }
  }
}
