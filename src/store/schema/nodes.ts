/** The `nodes` table: the live service processes of a fleet. */
import { integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * The nodes of a fleet sharing this database: one row per service process life,
 * written at start and refreshed every `[node] heartbeat_seconds`. A node whose heartbeat is
 * older than `dead_after_seconds` is dead. Rows of stopped processes are deleted.
 */
export const nodes = pgTable('nodes', {
  /** `host:pid:random`, unique per process life. */
  instance: text('instance').primaryKey(),
  name: text('name').notNull(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  /** The node's `[workspace] roots`, absolute. */
  roots: jsonb('roots').$type<string[]>().notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true, mode: 'date' }).notNull(),
});

export type NodeRow = typeof nodes.$inferSelect;
