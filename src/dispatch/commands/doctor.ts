/** `/doctor`. */
import type { InboundMessage } from '../../channels/types.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';

/** `/doctor`: the doctor table where the service gives one. */
export async function doctorCommand(ctx: DispatchContext, message: InboundMessage): Promise<DispatchResult> {
  const { deps } = ctx;
  await ctx.reply(
    message,
    deps.doctor
      ? await deps.doctor()
      : 'The doctor is available from the running service; run `baton doctor` on the machine.',
  );
  return ANSWERED;
}
