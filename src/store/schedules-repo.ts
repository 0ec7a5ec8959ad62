/**
 * The schedules repository: the only module that writes `schedules` and `schedule_firings`. A
 * slot is claimed by one `INSERT … ON CONFLICT DO NOTHING` on (schedule, slot time), so however
 * many nodes look at a schedule, and however often they restart, one of them acts on each slot.
 */
import { and, desc, eq, gt, inArray, lt, ne, sql } from 'drizzle-orm';
import type { Db } from './database.js';
import {
  runs,
  scheduleFirings,
  schedules,
  type FiringRow,
  type FiringStatus,
  type ScheduleRow,
  type ScheduleState,
} from './schema.js';

/** A new schedule, as its creator gives it. */
export type NewSchedule = typeof schedules.$inferInsert;

/** The schedules repository. */
export class ScheduleStore {
  constructor(private readonly db: Db) {}

  /** Stores a new schedule. */
  async create(schedule: NewSchedule): Promise<ScheduleRow> {
    const [row] = await this.db.insert(schedules).values(schedule).returning();
    return row!;
  }

  /** The schedule `id` (deleted ones too), or undefined. */
  async get(id: string): Promise<ScheduleRow | undefined> {
    const [row] = await this.db.select().from(schedules).where(eq(schedules.id, id)).limit(1);
    return row;
  }

  /** Every schedule not deleted, oldest first. */
  async list(): Promise<ScheduleRow[]> {
    return this.db.select().from(schedules).where(ne(schedules.state, 'deleted')).orderBy(schedules.createdAt);
  }

  /** The schedules that fire. */
  async active(): Promise<ScheduleRow[]> {
    return this.db.select().from(schedules).where(eq(schedules.state, 'active')).orderBy(schedules.createdAt);
  }

  /**
   * Moves schedule `id` to `state` when it is in one of `from`.
   *
   * @returns the row after the change, or undefined when no schedule `id` was in one of `from`.
   */
  async setState(id: string, state: ScheduleState, from: readonly ScheduleState[]): Promise<ScheduleRow | undefined> {
    const [row] = await this.db
      .update(schedules)
      .set({ state })
      .where(and(eq(schedules.id, id), inArray(schedules.state, [...from])))
      .returning();
    return row;
  }

  /**
   * The latest firing of schedule `id`, or undefined; `slotsOnly`: of its own slots (a Run now
   * is not one of them, so it never hides a slot due before it).
   */
  async lastFiring(id: string, slotsOnly = false): Promise<FiringRow | undefined> {
    const [row] = await this.db
      .select()
      .from(scheduleFirings)
      .where(and(eq(scheduleFirings.scheduleId, id), ...(slotsOnly ? [eq(scheduleFirings.manual, false)] : [])))
      .orderBy(desc(scheduleFirings.slotAt))
      .limit(1);
    return row;
  }

  /**
   * Claims slot `slotAt` of schedule `scheduleId` for `node`, in `status` (`claimed` to act on it,
   * `missed` to record it unfired).
   *
   * @returns the claimed firing, or undefined when another claim (any node, any start) has it.
   */
  async claim(
    claim: { scheduleId: string; slotAt: Date; node: string; now: Date },
    status: Extract<FiringStatus, 'claimed' | 'missed'> = 'claimed',
  ): Promise<FiringRow | undefined> {
    const [row] = await this.db
      .insert(scheduleFirings)
      .values({
        ...claim,
        claimedAt: claim.now,
        lateMs: Math.max(0, claim.now.getTime() - claim.slotAt.getTime()),
        status,
      })
      .onConflictDoNothing()
      .returning();
    return row;
  }

  /** Records what became of a claimed firing. */
  async settle(
    firing: Pick<FiringRow, 'scheduleId' | 'slotAt'>,
    outcome: { status: FiringStatus; reason?: string | null; runId?: string | null },
  ): Promise<void> {
    await this.db
      .update(scheduleFirings)
      .set({ status: outcome.status, reason: outcome.reason ?? null, runId: outcome.runId ?? null })
      .where(and(eq(scheduleFirings.scheduleId, firing.scheduleId), eq(scheduleFirings.slotAt, firing.slotAt)));
  }

  /**
   * Records a Run now of schedule `scheduleId` at `now`: a `requested` firing the next node to
   * look at its schedules launches.
   */
  async request(scheduleId: string, node: string, now: Date): Promise<void> {
    await this.db
      .insert(scheduleFirings)
      .values({ scheduleId, slotAt: now, node, claimedAt: now, lateMs: 0, status: 'requested', manual: true })
      .onConflictDoNothing();
  }

  /**
   * Takes a `waiting` or `requested` firing over for `node` (one node wins it): it becomes
   * `claimed`.
   *
   * @returns the firing, or undefined when another node took it or it is no longer in `from`.
   */
  async take(
    firing: Pick<FiringRow, 'scheduleId' | 'slotAt'>,
    from: 'waiting' | 'requested',
    node: string,
  ): Promise<FiringRow | undefined> {
    const [row] = await this.db
      .update(scheduleFirings)
      .set({ status: 'claimed', node })
      .where(
        and(
          eq(scheduleFirings.scheduleId, firing.scheduleId),
          eq(scheduleFirings.slotAt, firing.slotAt),
          eq(scheduleFirings.status, from),
        ),
      )
      .returning();
    return row;
  }

  /**
   * Takes over a firing still `claimed` since before `claimedBefore` (its node died between the
   * claim and the launch) for `node`: one node wins it.
   *
   * @returns the firing, claimed anew, or undefined when another node took it or it moved on.
   */
  async retake(
    firing: Pick<FiringRow, 'scheduleId' | 'slotAt'>,
    node: string,
    claimedBefore: Date,
    now: Date,
  ): Promise<FiringRow | undefined> {
    const [row] = await this.db
      .update(scheduleFirings)
      .set({ node, claimedAt: now })
      .where(
        and(
          eq(scheduleFirings.scheduleId, firing.scheduleId),
          eq(scheduleFirings.slotAt, firing.slotAt),
          eq(scheduleFirings.status, 'claimed'),
          lt(scheduleFirings.claimedAt, claimedBefore),
        ),
      )
      .returning();
    return row;
  }

  /** The firings that wait (`waiting`, `requested`), oldest slot first. */
  async pending(): Promise<FiringRow[]> {
    return this.db
      .select()
      .from(scheduleFirings)
      .where(inArray(scheduleFirings.status, ['waiting', 'requested']))
      .orderBy(scheduleFirings.slotAt);
  }

  /**
   * The run a launched firing of schedule `id` started that is not finished yet (queued,
   * starting or running), or undefined.
   */
  async unfinishedRun(id: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ runId: runs.id })
      .from(scheduleFirings)
      .innerJoin(runs, eq(runs.id, scheduleFirings.runId))
      .where(
        and(
          eq(scheduleFirings.scheduleId, id),
          eq(scheduleFirings.status, 'launched'),
          inArray(runs.status, ['queued', 'starting', 'running']),
        ),
      )
      .limit(1);
    return row?.runId;
  }

  /** How many slots of schedule `id` were skipped since its last launched run (for its next notice). */
  async skippedSinceLaunch(id: string): Promise<number> {
    const [last] = await this.db
      .select({ slotAt: scheduleFirings.slotAt })
      .from(scheduleFirings)
      .where(and(eq(scheduleFirings.scheduleId, id), eq(scheduleFirings.status, 'launched')))
      .orderBy(desc(scheduleFirings.slotAt))
      .limit(1);
    const [count] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(scheduleFirings)
      .where(
        and(
          eq(scheduleFirings.scheduleId, id),
          eq(scheduleFirings.status, 'skipped'),
          ...(last ? [gt(scheduleFirings.slotAt, last.slotAt)] : []),
        ),
      );
    return count?.n ?? 0;
  }

  /** The schedule whose firing started run `runId` (a run's origin, for `/runs`), or undefined. */
  async originOfRun(runId: string): Promise<Pick<ScheduleRow, 'id' | 'name'> | undefined> {
    return (await this.originsOfRuns([runId])).get(runId);
  }

  /** Run id → the schedule whose firing started it, for those of `runIds` a schedule started. */
  async originsOfRuns(runIds: readonly string[]): Promise<Map<string, Pick<ScheduleRow, 'id' | 'name'>>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.db
      .select({ runId: scheduleFirings.runId, id: schedules.id, name: schedules.name })
      .from(scheduleFirings)
      .innerJoin(schedules, eq(schedules.id, scheduleFirings.scheduleId))
      .where(inArray(scheduleFirings.runId, [...runIds]));
    return new Map(rows.map((r) => [r.runId!, { id: r.id, name: r.name }]));
  }
}
