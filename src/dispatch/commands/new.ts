/** `/new`: the conversation's current session ends; its next plain message starts a new run. */
import { conversationOf, type InboundMessage } from '../../channels/types.js';
import { NEW_SESSION_COMMANDS_TEXT, NEW_SESSION_TEXT } from '../../wording/converse.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';

/** Records the conversation's fresh start; a running run is left as it is (/stop ends it). */
export async function newCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  await ctx.deps.store.sessions.startFresh(conversationOf(message), ctx.deps.clock.now());
  return answer(
    ctx,
    message,
    ctx.config.chat.plainMessages === 'converse' ? NEW_SESSION_TEXT : NEW_SESSION_COMMANDS_TEXT,
  );
}
