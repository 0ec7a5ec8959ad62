/** The outbox table `deliveries`: one row per message baton sends, with its parts and attempts. */
import { sql } from 'drizzle-orm';
import { bigserial, index, integer, jsonb, pgEnum, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import type { ButtonJson } from '../../core/buttons.js';
import { runs } from './runs.js';

/** Outbox row states: `dead` rows are kept, listed, never sent. */
export const deliveryStatusEnum = pgEnum('delivery_status', ['pending', 'delivered', 'dead']);
/**
 * How a delivery's body is written: `plain` text shown exactly as written, or `markdown` that each
 * channel renders in its own format (Telegram HTML, Slack mrkdwn, Discord Markdown).
 */
export const bodyFormatEnum = pgEnum('body_format', ['plain', 'markdown']);

/** One re-split of a delivery: from part `fromPart` (0-based) on, parts of at most `maxLength` UTF-16 units. */
export interface ReshapeJson {
  fromPart: number;
  maxLength: number;
}

/**
 * A file sent with a delivery: its bytes are on disk in the run directory (0600), so
 * a row that waits across a restart still has them.
 * - `long_body`: the delivery's whole body as a file (`result.md`). Used only when the body would
 *   take more than {@link LONG_BODY_PARTS} messages on the platform: then the first part goes as
 *   text, then this file, instead of the other parts.
 * - `always`: sent after the text (a run's `hr_….patch`).
 * `refused` is set once the platform refused the file for good (or it is gone from disk): a
 * `long_body` file then falls back to the remaining text parts, an `always` file is skipped.
 */
export interface DocumentJson {
  /** Absolute path of the file. */
  path: string;
  /** The name the platform shows, e.g. `result.md`, `hr_0123456789ab.patch`. */
  filename: string;
  use: 'long_body' | 'always';
  /** A short text sent with the file (Telegram caption, Slack initial comment, Discord content). */
  caption?: string;
  refused?: boolean;
}

/** Messages a body may take before it goes as its first part plus `result.md` (about three chat messages). */
export const LONG_BODY_PARTS = 3;

/** Where a delivery goes: a chat, optionally a thread, optionally as a reply. */
export interface DeliveryTargetJson {
  platform: string;
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
}

export const deliveries = pgTable(
  'deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').references(() => runs.id, { onDelete: 'set null' }),
    kind: text('kind').notNull(),
    target: jsonb('target').$type<DeliveryTargetJson>().notNull(),
    body: text('body').notNull(),
    /** How `body` is written; rows from before formatting are plain. */
    format: bodyFormatEnum('format').notNull().default('plain'),
    status: deliveryStatusEnum('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** How many split parts have reached the platform, so a retry resumes after them. */
    partsDelivered: integer('parts_delivered').notNull().default(0),
    /**
     * Re-splits after the platform refused a part as too long, in order: from part `fromPart` on,
     * parts are at most `maxLength`. Kept so a retry lays the message out exactly as before.
     */
    reshapes: jsonb('reshapes').$type<ReshapeJson[]>().notNull().default([]),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastError: text('last_error'),
    platformMessageIds: jsonb('platform_message_ids').$type<string[]>().notNull().default([]),
    /** Files sent with the message, after its text (see {@link DocumentJson}); empty for most rows. */
    documents: jsonb('documents').$type<DocumentJson[]>().notNull().default([]),
    /** Buttons under the message's last part; null for none. */
    buttons: jsonb('buttons').$type<ButtonJson[]>(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('deliveries_due').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('deliveries_run').on(t.runId),
  ],
);

export type DeliveryRow = typeof deliveries.$inferSelect;
