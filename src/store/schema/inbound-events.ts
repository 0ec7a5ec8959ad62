/** The inbox table `inbound_events`: raw inbound updates and their claims. */
import { sql } from 'drizzle-orm';
import { index, json, pgEnum, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Inbox states: `received` (the raw update is stored, nobody handles it yet), `claimed` (a
 * service process, `claimed_by`, is handling it), `handled` (acted on; never again). The default
 * is `handled` so rows written before the inbox existed are never replayed.
 */
export const inboundStateEnum = pgEnum('inbound_state', ['received', 'claimed', 'handled']);

/**
 * The inbox: inbound events by platform and dedupe key. A channel that polls (Telegram) stores
 * each raw update here before its poll offset moves past it; every message is claimed here before
 * anything is acted on, so the dedupe key also guarantees no second run.
 */
export const inboundEvents = pgTable(
  'inbound_events',
  {
    platform: text('platform').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
    state: inboundStateEnum('state').notNull().default('handled'),
    /** `host:pid` of the service process handling a `claimed` event. */
    claimedBy: text('claimed_by'),
    /**
     * The platform's raw update while it is not yet handled (cleared once handled). `json`, not
     * `jsonb`: jsonb refuses `\u0000`, so a message holding a NUL would fail its own save and
     * block the poll behind it; json keeps the text as sent (the dispatcher then refuses it).
     */
    payload: json('payload'),
  },
  (t) => [
    primaryKey({ columns: [t.platform, t.dedupeKey] }),
    index('inbound_events_open').on(t.platform).where(sql`${t.state} <> 'handled'`),
  ],
);
