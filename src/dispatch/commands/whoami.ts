/** `/whoami`: the sender's id, the chat and the sender's role. */
import { whoamiText } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';
import type { Role } from '../trust.js';

/** `/whoami`. */
export async function whoamiCommand(
  ctx: DispatchContext,
  message: InboundMessage,
  role: Role,
): Promise<DispatchResult> {
  return answer(ctx, message, whoamiText(message.platform, message.senderId, message.chatId, role));
}
