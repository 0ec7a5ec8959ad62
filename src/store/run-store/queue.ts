/**
 * The run queue: runs waiting `queued` for a worktree, a slot or their node, and their claim.
 */
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../database.js';
import { runs, type DeliveryRow, type NewRunRow, type QueuedLaunchJson, type RunRow } from '../schema.js';
import { forInstance, IS_ACTIVE, IS_QUEUED, LAUNCH_LOCK_KEY, limitsOf } from './sql-filters.js';
import { endRunWithOutcome } from './transaction.js';
import type { ActiveLimits, NewDelivery } from './types.js';

/** Run `id` while it is still `queued`. */
function stillQueued(id: string): SQL | undefined {
  return and(eq(runs.id, id), eq(runs.status, 'queued'));
}

/** The run queue: runs waiting `queued` for a worktree, a slot or their node, and their claim. */
export class QueueRepo {
  constructor(private readonly db: Db) {}

  /** Runs waiting `queued` for node `node` (routed there, or queued there for a slot), oldest first. */
  async queuedFor(node: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(and(eq(runs.status, 'queued'), eq(runs.node, node)))
      .orderBy(runs.createdAt);
  }

  /**
   * True when any run waits `queued` (one index lookup, no lock): a run's end skips the queue pass
   * when none does. A run queued after this answered is started by the process that
   * queued it, which looks again once its run row is committed.
   */
  async hasQueued(): Promise<boolean> {
    const rows = await this.db.select({ id: runs.id }).from(runs).where(IS_QUEUED).limit(1);
    return rows.length > 0;
  }

  /** True when a run waits `queued` for node `node` (for instance `instance` of it, when given): a cheap poll before {@link claimQueued}. */
  async hasQueuedFor(node: string, instance?: string): Promise<boolean> {
    const rows = await this.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.status, 'queued'), eq(runs.node, node), forInstance(instance)))
      .limit(1);
    return rows.length > 0;
  }

  /** Runs routed to `node` (to instance `instance` of it, when given, see {@link claimQueued}) that it has not prepared yet (their `launch.route` is set), oldest first. */
  async routedRuns(node: string, instance?: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(and(eq(runs.status, 'queued'), eq(runs.node, node), sql`${runs.launch} ? 'route'`, forInstance(instance)))
      .orderBy(runs.createdAt);
  }

  /**
   * Records where a routed run goes on its node (its directory resolved there, its worktree made)
   * and drops `launch.route`, so {@link claimQueued} may start it.
   *
   * @returns false when the run is no longer queued (cancelled meanwhile).
   */
  async placeRouted(
    id: string,
    place: Pick<NewRunRow, 'cwd' | 'worktreeRoot' | 'branch' | 'sourceRoot'>,
  ): Promise<boolean> {
    const updated = await this.db
      .update(runs)
      .set({ ...place, launch: sql`${runs.launch} - 'route'` as unknown as QueuedLaunchJson })
      .where(and(eq(runs.id, id), eq(runs.status, 'queued')))
      .returning({ id: runs.id });
    return updated.length === 1;
  }

  /**
   * Ends a queued run that cannot start as `status` (default `failed`) with `reason`, with its
   * outcome message, in one transaction: a routed run whose directory its node refuses (`failed`,
   * a {@link BatonError} code), a run waiting for a node that was lost (`interrupted`,
   * `node_lost`).
   *
   * @returns the outcome delivery, or null when the run was no longer queued.
   */
  async refuseQueued(
    id: string,
    reason: string,
    errorMessage: string,
    outcome: NewDelivery,
    now: Date,
    status: 'failed' | 'interrupted' = 'failed',
  ): Promise<DeliveryRow | null> {
    return this.db.transaction((tx) =>
      endRunWithOutcome(
        tx,
        stillQueued(id),
        { status, reason, errorMessage, endedAt: now, launch: null },
        outcome,
        now,
      ),
    );
  }

  /**
   * Moves queued runs whose slot is free to `starting` under `supervisor`, oldest first:
   * a run waits while its worktree holds an active run (or an older queued one claimed in
   * this pass) and the claiming stops at `maxActive`. Serialized with {@link createRun} by the
   * same advisory lock, so any number of processes may call it at any time; each run is claimed
   * once.
   *
   * With `node`, `maxActive` counts the active runs of that node, and the runs
   * claimed are those addressed to it (routed there or queued there) once prepared; runs from
   * before routing (no node) are claimed by a process of the host that queued them.
   *
   * With `instance` too, of the runs addressed to `node` only those this instance may take
   * (addressed to it, to no instance, or to one gone from `nodes`): a second live process that
   * took the same name never claims a run routed to the first.
   *
   * @param only when given, only these runs are claimed (a process that sees only its own runs
   *   through); the others are not started here but keep their place in line.
   * @param now a run whose `not_before` is after this is not claimed, and holds no place in line.
   * @returns the claimed runs, each with its `launch`.
   */
  async claimQueued(
    limits: ActiveLimits,
    supervisor: string,
    node?: string,
    instance?: string,
    only?: readonly string[],
    now: Date = new Date(),
  ): Promise<RunRow[]> {
    const { node: maxActive, fleet: fleetMaxActive } = limitsOf(limits);
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LAUNCH_LOCK_KEY})`);
      const active = await tx.select({ worktreeRoot: runs.worktreeRoot, node: runs.node }).from(runs).where(IS_ACTIVE);
      // Only runs queued for this node, or (without a node) on this host: their cwd, worktree and
      // attachments are there (a fleet shares the database, not the disks).
      const host = supervisor.slice(0, supervisor.lastIndexOf(':') + 1);
      const here = sql`(${runs.node} is null and starts_with(${runs.supervisor}, ${host}))`;
      const queued = await tx
        .select()
        .from(runs)
        .where(
          and(
            IS_QUEUED,
            node ? sql`((${runs.node} = ${node} and ${forInstance(instance)}) or ${here})` : here,
            sql`not (coalesce(${runs.launch}, '{}'::jsonb) ? 'route')`,
            sql`(${runs.notBefore} is null or ${runs.notBefore} <= ${now.toISOString()}::timestamptz)`,
          ),
        )
        .orderBy(runs.createdAt);
      const busyRoots = new Set(active.map((a) => a.worktreeRoot));
      let count = node ? active.filter((a) => a.node === node || a.node === null).length : active.length;
      let fleetCount = active.length;
      const claimed: RunRow[] = [];
      for (const run of queued) {
        if (count >= maxActive || (fleetMaxActive !== undefined && fleetCount >= fleetMaxActive)) break;
        // A process that may start only its own runs leaves the rest to the service; they keep
        // their place: a run never overtakes one queued earlier for the same worktree.
        if (only && !only.includes(run.id)) {
          busyRoots.add(run.worktreeRoot);
          continue;
        }
        if (busyRoots.has(run.worktreeRoot)) continue;
        busyRoots.add(run.worktreeRoot);
        const [row] = await tx
          .update(runs)
          .set({ status: 'starting', supervisor })
          .where(and(eq(runs.id, run.id), eq(runs.status, 'queued')))
          .returning();
        if (row) {
          claimed.push(row);
          count += 1;
          fleetCount += 1;
        }
      }
      return claimed;
    });
  }

  /** Queued runs, oldest first. */
  async queuedRuns(): Promise<RunRow[]> {
    return this.db.select().from(runs).where(eq(runs.status, 'queued')).orderBy(runs.createdAt);
  }

  /**
   * Cancels a run that is still queued, with its outcome message, in one transaction.
   *
   * @returns the outcome delivery, or null when the run was no longer queued (it started or ended meanwhile).
   */
  async cancelQueued(
    id: string,
    reason: 'owner_cancel' | 'stop',
    outcome: NewDelivery,
    now: Date,
  ): Promise<DeliveryRow | null> {
    return this.db.transaction((tx) =>
      endRunWithOutcome(tx, stillQueued(id), { status: 'cancelled', reason, endedAt: now, launch: null }, outcome, now),
    );
  }
}
