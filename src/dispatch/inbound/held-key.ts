/**
 * The key under which a sender's files wait in a conversation, and under which a conversation's
 * downloads are counted.
 */
import { conversationOf, type InboundMessage } from '../../channels/types.js';

/**
 * Held files belong to the sender in the conversation the next command comes from (see
 * {@link conversationOf}: a top-level Slack message names itself as its thread). An empty
 * `senderId` names the whole conversation.
 */
export function heldKey(
  message: Pick<InboundMessage, 'platform' | 'chatId' | 'threadId' | 'topLevel' | 'senderId'>,
): string {
  const conversation = conversationOf(message);
  return JSON.stringify([conversation.platform, conversation.chatId, conversation.threadId ?? '', message.senderId]);
}
