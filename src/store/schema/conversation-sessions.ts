/** The `conversation_sessions` table: where a conversation's current agent session begins. */
import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * A conversation's `/new`: runs it started before `freshSince` are no longer its current session,
 * so the next plain message starts a new run rather than resuming one of them.
 */
export const conversationSessions = pgTable(
  'conversation_sessions',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    /** '' for a conversation without threads. */
    threadId: text('thread_id').notNull().default(''),
    freshSince: timestamp('fresh_since', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.threadId] })],
);
