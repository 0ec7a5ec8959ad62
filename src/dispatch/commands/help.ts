/** `/help`. */
import type { InboundMessage } from '../../channels/types.js';
import { AGENTS_DISABLED } from '../../wording/dispatch.js';
import { HELP_TEXT } from '../../wording/commands.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';

/** `/help`: the commands, or that coding agents are disabled here. */
export async function helpCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  return answer(ctx, message, ctx.config.harness.enabled ? HELP_TEXT : AGENTS_DISABLED);
}
