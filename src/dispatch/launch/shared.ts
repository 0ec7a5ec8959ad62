/** Steps both launch paths take with the launch's state (not pure, so not in plan.ts). */
import type { IncomingAttachment, InboundMessage } from '../../channels/types.js';
import type { LaunchContext } from './context.js';

/**
 * The files a launch takes: those the sender sent alone before it (and forgets them), then the
 * message's own.
 */
export function incomingFiles(ctx: Pick<LaunchContext, 'held'>, message: InboundMessage): IncomingAttachment[] {
  return [...ctx.held.take(message), ...(message.attachments ?? [])];
}
