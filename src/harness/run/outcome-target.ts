/** Where the messages about a run go. */
import type { RunRow } from '../../store/schema.js';

/** Outcome messages reply to the request that launched the run, in its thread. */
export function outcomeTarget(run: Pick<RunRow, 'origin'>): {
  platform: string;
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
} {
  return {
    platform: run.origin.platform,
    chatId: run.origin.chatId,
    ...(run.origin.threadId ? { threadId: run.origin.threadId } : {}),
    replyToMessageId: run.origin.messageId,
  };
}
