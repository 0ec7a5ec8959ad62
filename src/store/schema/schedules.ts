/** The `schedules` and `schedule_firings` tables: runs that start by themselves, fired once per slot. */
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Where a schedule's runs and notices go, frozen when it is created. */
export interface ScheduleTargetJson {
  platform: string;
  chatId: string;
  threadId?: string;
  /** The message that created it (notices answer under it); absent for a `to:` chat or the CLI. */
  replyToMessageId?: string;
}

/** A schedule's state: only `active` ones fire; `expired` and `done` are kept for `/schedules`. */
export const SCHEDULE_STATES = ['active', 'paused', 'expired', 'done', 'deleted'] as const;
/** One of {@link SCHEDULE_STATES}. */
export type ScheduleState = (typeof SCHEDULE_STATES)[number];

/**
 * What became of one slot: `claimed` while the claiming node acts on it, then `launched` (a run
 * row exists), `blocked` (a gate refused; `reason` is the error code), `skipped` (the previous
 * run was still active), `waiting` (`overlap:queue`: launched once the previous run ends), `requested` (Run now: the
 * next node to look launches it) or
 * `missed` (`catch_up = "none"` and every node was down at the slot).
 */
export const FIRING_STATUSES = ['claimed', 'launched', 'blocked', 'skipped', 'waiting', 'requested', 'missed'] as const;
/** One of {@link FIRING_STATUSES}. */
export type FiringStatus = (typeof FIRING_STATUSES)[number];

/** Schedules, created by the owner in a chat or with `baton schedule add`. */
export const schedules = pgTable(
  'schedules',
  {
    /** `s_` + 8 hex. */
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    /** A 5-field cron expression; null for a one-shot (`/at`). */
    cron: text('cron'),
    /** The one-shot's instant; null for a cron schedule. */
    runAt: timestamp('run_at', { withTimezone: true, mode: 'date' }),
    /** IANA zone the cron expression is read in. */
    timezone: text('timezone').notNull(),
    /** No slot at or after this instant fires; the schedule becomes `expired`. */
    until: timestamp('until', { withTimezone: true, mode: 'date' }),
    /** `skip` or `queue`: what a slot does while the previous run is still active. */
    overlap: text('overlap', { enum: ['skip', 'queue'] }).notNull(),
    /** The launch command, as the owner wrote it (`/codex in:app run the tests`), parsed anew at each firing. */
    command: text('command').notNull(),
    target: jsonb('target').$type<ScheduleTargetJson>().notNull(),
    /** The platform user id of the owner who created it; a firing acts as this sender. */
    ownerId: text('owner_id').notNull(),
    state: text('state', { enum: SCHEDULE_STATES }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [index('schedules_state').on(t.state)],
);

/**
 * One row per slot that was acted on. The slot time is part of the key, so one
 * `INSERT … ON CONFLICT DO NOTHING` claims a slot for exactly one node, whatever restarts.
 */
export const scheduleFirings = pgTable(
  'schedule_firings',
  {
    scheduleId: text('schedule_id')
      .notNull()
      .references(() => schedules.id, { onDelete: 'cascade' }),
    slotAt: timestamp('slot_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** `[node] name` of the node that claimed the slot. */
    node: text('node').notNull(),
    claimedAt: timestamp('claimed_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** How long after its slot the firing was claimed, in ms. */
    lateMs: integer('late_ms').notNull(),
    status: text('status', { enum: FIRING_STATUSES }).notNull(),
    /** The error code of a `blocked` firing; `overlap` for a `skipped` one; `duplicate` for a `launched` one taken over after its node launched it; `node_lost` for a `missed` one. */
    reason: text('reason'),
    runId: text('run_id'),
    /** A firing the owner asked for (Run now): its slot is the instant asked, not one of the schedule's. */
    manual: boolean('manual').notNull().default(false),
  },
  (t) => [primaryKey({ columns: [t.scheduleId, t.slotAt] })],
);

/** A `schedules` row. */
export type ScheduleRow = typeof schedules.$inferSelect;
/** A `schedule_firings` row. */
export type FiringRow = typeof scheduleFirings.$inferSelect;
