import { doublePrecision, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { vendorEnum } from './runs.js';

/**
 * The plan windows a CLI last reported on a node (claude's `rate_limit_event`: the share used of
 * its 5-hour and weekly windows), one row per window, written at each run's end: what `/usage`
 * shows, and whether the owner was already warned for a window's current period.
 */
export const planWindows = pgTable(
  'plan_windows',
  {
    /** `[node] name` of the node whose CLI login reported it; '' outside a fleet. */
    node: text('node').notNull(),
    vendor: vendorEnum('vendor').notNull(),
    /** The vendor's name of the window, e.g. claude `five_hour`, `seven_day`. */
    window: text('window').notNull(),
    /** Share of the window used, 0–100 (can pass 100). */
    usedPercent: doublePrecision('used_percent').notNull(),
    resetsAt: timestamp('resets_at', { withTimezone: true, mode: 'date' }),
    /** When a run's stream reported it. */
    reportedAt: timestamp('reported_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The `resets_at` of the period the owner was warned for (`[harness] quota_warn_percent`): once per period. */
    warnedResetAt: timestamp('warned_reset_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [primaryKey({ columns: [t.node, t.vendor, t.window] })],
);

export type PlanWindowRow = typeof planWindows.$inferSelect;
