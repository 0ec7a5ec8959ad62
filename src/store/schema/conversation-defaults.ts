/** The `conversation_defaults` table: a conversation's `/use` directory. */
import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** A conversation's default run directory, set by `/use`. */
export const conversationDefaults = pgTable(
  'conversation_defaults',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    /** '' for a conversation without threads. */
    threadId: text('thread_id').notNull().default(''),
    cwd: text('cwd').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.threadId] })],
);
