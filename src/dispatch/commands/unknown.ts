/** A command baton does not know. */
import type { InboundMessage } from '../../channels/types.js';
import { UNKNOWN_COMMAND } from '../../wording/dispatch.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';

/** An unknown command: pointed at /help. */
export async function unknownCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  return answer(ctx, message, UNKNOWN_COMMAND);
}
