/** `/whoami`: the sender's id, the chat and the sender's role. */
import { whoamiText } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';
import type { Role } from '../trust.js';

/** `/whoami`. */
export async function whoamiCommand(
  ctx: DispatchContext,
  message: InboundMessage,
  role: Role,
): Promise<DispatchResult> {
  await ctx.reply(message, whoamiText(message.platform, message.senderId, message.chatId, role));
  return ANSWERED;
}
