/** Resume, under a finished run's outcome. */
import { resumingText } from '../../wording/presses.js';
import type { InboundMessage, InboundPress } from '../../channels/types.js';
import { isBatonError } from '../../core/errors.js';
import { AGENTS_DISABLED } from '../../wording/dispatch.js';
import { activeRunOfSession, sessionBusy } from '../commands/session.js';
import type { DispatchContext } from '../context.js';
import { refusalButtons } from '../worktree-gone.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';

/** The task of a run the Resume button starts. */
export const RESUME_TASK = 'Continue where you left off.';

/** The press as the message a launch from a button starts from (it replies to the pressed message), with `text` as its task. */
export function messageOf(press: InboundPress, text: string = RESUME_TASK): InboundMessage {
  return {
    platform: press.platform,
    dedupeKey: press.dedupeKey,
    chatId: press.chatId,
    isDirect: press.isDirect,
    ...(press.threadId ? { threadId: press.threadId } : {}),
    messageId: press.messageId,
    senderId: press.senderId,
    senderName: '',
    senderIsBot: false,
    text,
    receivedAt: press.receivedAt,
  };
}

/** Resumes the run's session with {@link RESUME_TASK}; a refusal is the answer. */
export async function pressResume(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(ctx.deps, press);
  if (!run) return RUN_NOT_KNOWN;
  if (!ctx.config.harness.enabled) return AGENTS_DISABLED;
  const busy = await activeRunOfSession(ctx.deps, run);
  if (busy) return sessionBusy(busy, 'press Resume again');
  const message = messageOf(press);
  try {
    const runId = await ctx.launch(run.vendor, { progress: false }, RESUME_TASK, message, run);
    return { text: resumingText(runId), done: true };
  } catch (err) {
    if (!isBatonError(err)) throw err;
    const buttons = refusalButtons(err);
    // Too long for a press answer, and it carries a button of its own.
    if (buttons) await ctx.reply(message, err.message, buttons);
    return err.message.slice(0, 190);
  }
}
