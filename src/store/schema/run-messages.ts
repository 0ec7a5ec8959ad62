/** The `run_messages` table: platform message ids baton sent about a run. */
import { pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { runs } from './runs.js';

/** Platform message ids of messages baton sent about a run, so a reply can find its run. */
export const runMessages = pgTable(
  'run_messages',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    messageId: text('message_id').notNull(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.messageId] })],
);
