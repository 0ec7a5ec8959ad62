/** A press acted on at most once per message, where the action must not repeat. */
import { alreadyPressedText } from '../../wording/presses.js';
import type { InboundPress } from '../../channels/types.js';
import { FIX_ACTION } from '../../core/buttons.js';
import type { DispatchContext } from '../context.js';
import { actOnPress } from './act-on-press.js';
import type { PressAnswer } from './outcome.js';

/**
 * Button actions acted on at most once per message: the first press of any button under the
 * message claims it (Resume, Fix, and the watchdog advisory's Keep waiting / +30 min / Stop and the
 * Stop under `started`).
 */
const ONCE_PER_MESSAGE: ReadonlySet<string> = new Set(['resume', FIX_ACTION, 'keep', 'extend', 'stop']);

/**
 * A press acted on once per message where the action must not repeat (Resume: a double tap
 * would start two resumes of one parent; +30 min would extend twice; Stop would be answered
 * twice): the first press claims the message in the database, so a second press of any button
 * of that message, a replayed callback or another process acts never; a refused one gives the
 * claim back. A press that decided something then has its message's buttons replaced by the
 * decision.
 *
 * @returns the answer the presser sees.
 */
export async function pressOnce(ctx: DispatchContext, press: InboundPress): Promise<string> {
  const { deps } = ctx;
  const message = { platform: press.platform, chatId: press.chatId, messageId: press.messageId };
  const claims = ONCE_PER_MESSAGE.has(press.action) ? deps.pressClaims : undefined;
  if (claims) {
    const earlier = await claims.claim(
      message,
      { action: press.action, arg: press.arg, pressedBy: `${press.platform}:${press.senderId}` },
      deps.clock.now(),
    );
    if (earlier) return alreadyPressedText(earlier.answer);
  }
  let outcome: PressAnswer;
  try {
    outcome = await actOnPress(ctx, press);
  } catch (err) {
    await claims?.release(message);
    throw err;
  }
  const { text, done } = typeof outcome === 'string' ? { text: outcome, done: false } : outcome;
  if (claims) await (done ? claims.answered(message, text) : claims.release(message));
  if (done) await deps.pressSettler?.settle({ ...message, threadId: press.threadId }, `✓ ${text}`);
  return text;
}
