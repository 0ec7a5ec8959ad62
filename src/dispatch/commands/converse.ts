/**
 * A plain message read as the next turn of the conversation (`[chat] plain_messages =
 * "converse"`): added to its one active run (steer.ts), else a resume of its current session,
 * else a new run with the default vendor in the conversation's directory.
 */
import { conversationOf, type InboundMessage } from '../../channels/types.js';
import { BatonError } from '../../core/errors.js';
import { parseReplyOptions } from '../command.js';
import type { DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import type { Role } from '../trust.js';
import { whichRunText } from '../../wording/converse.js';
import { runTag } from '../../wording/run-tag.js';
import { activeRunOfSession, sessionBusy } from './session.js';
import { steerRun } from './steer.js';

/** Whether `message` is a plain message addressed to baton that the conversation reading takes. */
export function conversesWith(ctx: DispatchContext, message: InboundMessage, text: string, role: Role): boolean {
  return (
    ctx.config.chat.plainMessages === 'converse' &&
    ctx.config.harness.enabled &&
    role === 'owner' &&
    (message.isDirect || message.mentioned === true) &&
    text.trim() !== ''
  );
}

/**
 * The owner's plain message as the conversation's next turn; the caller checked
 * {@link conversesWith}.
 *
 * @throws BatonError `resume_refused` with several active runs (which one is meant?) or a queued
 *   run of the session, the reply options' `usage`, and every launch refusal.
 */
export async function converse(ctx: DispatchContext, message: InboundMessage, text: string): Promise<DispatchResult> {
  const { deps } = ctx;
  const conversation = conversationOf(message);
  const active = await deps.store.sessions.activeRuns(conversation);
  if (active.length > 1) throw new BatonError('resume_refused', whichRunText(active.map((run) => runTag(run.id))));
  if (active[0]) return steerRun(ctx, message, active[0], text.trim());
  const current = await deps.store.sessions.currentSessionRun(conversation);
  if (!current) {
    return { kind: 'launched', runId: await ctx.launch('default', { progress: false }, text.trim(), message) };
  }
  const busy = await activeRunOfSession(deps, current);
  if (busy) throw new BatonError('resume_refused', sessionBusy(busy, 'send your message again'));
  const { options, task } = parseReplyOptions(text, current.vendor);
  return { kind: 'launched', runId: await ctx.launch(current.vendor, options, task, message, current) };
}
