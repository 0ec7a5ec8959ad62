/**
 * Plain text: a reply to a `[run …]` message resumes that run; the owner's other plain message is
 * the conversation's next turn where plain messages converse; anything else in a DM is pointed at
 * /help.
 */
import { TEXT_IN_DM } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import { BatonError } from '../../core/errors.js';
import { findRunIdTag } from '../../core/ids.js';
import type { RunRow } from '../../store/schema.js';
import { parseReplyOptions } from '../command.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatcherDeps, DispatchResult } from '../deps.js';
import { GUEST_REFUSAL, mayPerform, type Role } from '../trust.js';
import { converse, conversesWith } from './converse.js';
import { activeRunOfSession, sessionBusy } from './session.js';
import { steerRun } from './steer.js';

/**
 * The run a reply refers to: by the recorded id of the message replied to, else by the
 * `[run …]` tag in that message when the bot sent it, else the newest run of the thread.
 */
async function findRepliedRun(deps: DispatcherDeps, message: InboundMessage): Promise<RunRow | undefined> {
  const byId = await deps.store.runs.findRunByMessage(message.platform, message.chatId, message.replyToMessageId!);
  if (byId) return byId;
  const tag = message.replyToBotText ? findRunIdTag(message.replyToBotText) : undefined;
  if (tag) {
    const run = await deps.store.runs.getRun(tag);
    // Only a run that belongs to this conversation: a tag quoted from elsewhere is not a handle.
    if (run && run.origin.platform === message.platform && run.origin.chatId === message.chatId) return run;
  }
  // A reply in a thread (Slack: replyToMessageId is the thread root) continues the newest run
  // started in that thread.
  if (message.threadId !== undefined && message.replyToMessageId === message.threadId) {
    return deps.store.runs.latestRunInThread(message.platform, message.chatId, message.threadId);
  }
  return undefined;
}

/**
 * A reply to one of our `[run …]` messages: resume that run's session with the reply as task,
 * or, while a run of that session is at work, add it to that run (steer.ts).
 *
 * @returns undefined when the replied-to message is not a run message.
 * @throws BatonError `resume_refused` while the session is busy, and any launch refusal.
 */
async function resumeByReply(
  ctx: DispatchContext,
  message: InboundMessage,
  text: string,
  role: Role,
): Promise<DispatchResult | undefined> {
  if (!message.replyToMessageId) return undefined;
  const parent = await findRepliedRun(ctx.deps, message);
  if (!parent) return undefined;
  if (!mayPerform(role, 'launch', message.isDirect)) {
    await ctx.reply(message, GUEST_REFUSAL);
    return { kind: 'refused', code: 'not_authorized' };
  }
  if (!ctx.config.harness.enabled) return { kind: 'ignored' };
  const busy = await activeRunOfSession(ctx.deps, parent);
  // A run at work takes the reply as a message to its running turn; a queued one is waited for.
  if (busy && busy.status !== 'queued') return steerRun(ctx, message, busy, text.trim());
  if (busy) throw new BatonError('resume_refused', sessionBusy(busy, 'reply again'));
  // A reply may carry options as a command does (`tokens:8k continue`).
  const { options, task } = parseReplyOptions(text, parent.vendor);
  return { kind: 'launched', runId: await ctx.launch(parent.vendor, options, task, message, parent) };
}

/** Text that is no command. */
export async function textCommand(
  ctx: DispatchContext,
  command: { text: string },
  message: InboundMessage,
  role: Role,
): Promise<DispatchResult> {
  const resumed = await resumeByReply(ctx, message, command.text, role);
  if (resumed) return resumed;
  if (conversesWith(ctx, message, command.text, role)) return converse(ctx, message, command.text);
  if (!message.isDirect) return { kind: 'ignored' };
  return answer(ctx, message, TEXT_IN_DM);
}
