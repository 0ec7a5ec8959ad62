/** Fix, under a completed run whose verification failed: its session resumed with the failure as the task. */
import type { InboundPress } from '../../channels/types.js';
import { isBatonError } from '../../core/errors.js';
import { FIXABLE_VERIFY_REASONS } from '../../types/run-facts.js';
import { AGENTS_DISABLED } from '../../wording/dispatch.js';
import { fixingText, fixTask, NOTHING_TO_FIX } from '../../wording/verification.js';
import { activeRunOfSession, sessionBusy } from '../commands/session.js';
import type { DispatchContext } from '../context.js';
import { refusalButtons } from '../worktree-gone.js';
import { pressedRun, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';
import { messageOf } from './resume.js';

/**
 * Resumes the run's session with its verification's failure as the task; the new run is
 * verified with the same commands. A refusal is the answer.
 */
export async function pressFix(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const run = await pressedRun(ctx.deps, press);
  if (!run) return RUN_NOT_KNOWN;
  if (!ctx.config.harness.enabled) return AGENTS_DISABLED;
  // The stored row decides, not the button: a Fix of a run that passed has nothing to hand on.
  const verification = run.verification;
  if (!verification || !FIXABLE_VERIFY_REASONS.has(verification.reason)) return NOTHING_TO_FIX;
  const busy = await activeRunOfSession(ctx.deps, run);
  if (busy) return sessionBusy(busy, 'press Fix again');
  const message = messageOf(press, fixTask(verification));
  try {
    const runId = await ctx.launch(run.vendor, { progress: false }, message.text, message, run);
    return { text: fixingText(runId), done: true };
  } catch (err) {
    if (!isBatonError(err)) throw err;
    const buttons = refusalButtons(err);
    if (buttons) await ctx.reply(message, err.message, buttons);
    return err.message.slice(0, 190);
  }
}
