/** The `button_presses` table: presses claimed once across processes. */
import { pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Presses acted on, one per message with baton's buttons: the first press of a message's buttons
 * claims it, so a double tap (two presses, two dedupe keys) or a press on a card already decided
 * acts once, whichever process handles it. A press whose action was refused gives its claim back.
 */
export const buttonPresses = pgTable(
  'button_presses',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    /** The platform's id of the message the buttons are under. */
    messageId: text('message_id').notNull(),
    action: text('action').notNull(),
    arg: text('arg').notNull(),
    /** `platform:user id` of who pressed. */
    pressedBy: text('pressed_by').notNull(),
    pressedAt: timestamp('pressed_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The answer the first press got, told to a later press; null while it is being acted on. */
    answer: text('answer'),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.messageId] })],
);
