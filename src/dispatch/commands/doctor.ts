/** `/doctor`. */
import { DOCTOR_ELSEWHERE } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';

/** `/doctor`: the doctor table where the service gives one. */
export async function doctorCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  const { deps } = ctx;
  await ctx.reply(message, deps.doctor ? await deps.doctor() : DOCTOR_ELSEWHERE);
  return ANSWERED;
}
