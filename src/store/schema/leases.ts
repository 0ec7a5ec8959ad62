/** The `leases` table: named leases one process of a fleet holds at a time. */
import { pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Leases on connections only one process of the fleet may hold (a bot token's long poll): keyed
 * by the platform and a hash of the token (never the token), held by a node instance until
 * `expires_at` (database time), renewed well before then.
 */
export const leases = pgTable('leases', {
  key: text('key').primaryKey(),
  /** The holder's {@link nodes} instance. */
  holder: text('holder').notNull(),
  nodeName: text('node_name').notNull(),
  acquiredAt: timestamp('acquired_at', { withTimezone: true, mode: 'date' }).notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
});
