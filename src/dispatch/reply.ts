/** A reply to an inbound message, through the outbox. */
import type { InboundMessage } from '../channels/types.js';
import type { ButtonJson } from '../core/buttons.js';
import type { Outbox } from '../delivery/outbox.js';

/** Sends `body` (and its buttons, if any) as a reply to `message` in its conversation. */
export async function replyTo(
  outbox: Pick<Outbox, 'send'>,
  message: InboundMessage,
  body: string,
  buttons?: ButtonJson[],
): Promise<void> {
  await outbox.send({
    ...(buttons?.length ? { buttons } : {}),
    runId: null,
    kind: 'reply',
    target: {
      platform: message.platform,
      chatId: message.chatId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
      replyToMessageId: message.messageId,
    },
    body,
  });
}
