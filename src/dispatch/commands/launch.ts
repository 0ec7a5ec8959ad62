/** `/codex`, `/claude` and `/run`: a new run. */
import type { InboundMessage } from '../../channels/types.js';
import type { VendorName } from '../../core/vendor-name.js';
import { UNKNOWN_COMMAND } from '../../wording/dispatch.js';
import type { LaunchOptions } from '../command.js';
import type { DispatchContext } from '../context.js';
import type { DispatchResult } from '../deps.js';

/**
 * A launch command; where coding agents are disabled it is answered as an unknown command.
 *
 * @throws BatonError for a refused launch (see launch/launch.ts).
 */
export async function launchCommand(
  ctx: DispatchContext,
  command: { vendor: VendorName | 'default'; options: LaunchOptions; task: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  if (!ctx.config.harness.enabled) {
    await ctx.reply(message, UNKNOWN_COMMAND);
    return { kind: 'refused', code: 'harness_disabled' };
  }
  return { kind: 'launched', runId: await ctx.launch(command.vendor, command.options, command.task, message) };
}
