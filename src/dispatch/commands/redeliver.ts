/** `/redeliver ID` and the Redeliver button. */
import { notDeadLetterText, redeliveredText } from '../../wording/dispatch.js';
import type { InboundMessage } from '../../channels/types.js';
import { answer, type DispatchContext } from '../context.js';
import type { DispatcherDeps, DispatchResult } from '../deps.js';
import { parseSerialId, quotedId } from '../serial-id.js';

/** A dead letter goes back to the queue once; @returns the answer to the owner. */
export async function redeliver(deps: DispatcherDeps, id: string): Promise<string> {
  const deliveryId = parseSerialId(id);
  const row = deliveryId !== undefined ? await deps.store.outbox.redeliver(deliveryId, deps.clock.now()) : undefined;
  if (!row) return notDeadLetterText(quotedId(id));
  deps.logger.info({ deliveryId: row.id, runId: row.runId }, 'dead letter redelivered by the owner');
  const sent = await deps.outbox.attempt(row);
  return redeliveredText(row.id, sent);
}

/** `/redeliver ID`. */
export async function redeliverCommand(
  ctx: DispatchContext,
  command: { deliveryId: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  return answer(ctx, message, redeliver(ctx.deps, command.deliveryId));
}
