/** `/doctor`. */
import { DOCTOR_ELSEWHERE } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';

/** `/doctor`: the doctor table where the service gives one. */
export async function doctorCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  const { deps } = ctx;
  return answer(ctx, message, deps.doctor ? await deps.doctor() : DOCTOR_ELSEWHERE);
}
