/**
 * Launches: a new run row and its `started` message, written under the launch lock.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../database.js';
import { deliveries, runs, type DeliveryRow, type NewRunRow, type QueuedLaunchJson, type RunRow } from '../schema.js';
import { fleetMaxActiveRefusal, maxActiveRefusal, queueFullRefusal, worktreeBusyRefusal } from './refusals.js';
import { IS_ACTIVE, IS_OPEN, LAUNCH_LOCK_KEY, limitsOf, onNode, RUNS_CHANNEL } from './sql-filters.js';
import { isUniqueViolation, markInboundHandledIn, queuedInConversation, toDeliveryValues } from './transaction.js';
import type { ActiveLimits, InboundKey, NewDelivery, QueuePlace, QueuePolicy } from './types.js';

/** Launches: a new run row and its `started` message, written under the launch lock. */
export class LaunchesRepo {
  constructor(private readonly db: Db) {}

  /**
   * Inserts a new `starting` run and its `started` message in one transaction, holding the lock
   * domain: one active run per worktree root (a partial unique index) and at most `maxActive`
   * active runs (counted under a transaction-scoped advisory lock).
   *
   * With `queue`, a run that would be refused for a busy worktree or `max_active` —
   * or that would overtake a run already queued for its worktree — is stored `queued` instead,
   * with `queue.launch` to start it later, and `started` is called with its place in line.
   *
   * With `queue.notBefore`, the run is queued whatever the slots, to be claimed from then on.
   *
   * When `inbound` is given, that event is marked handled in the same transaction, so a replay
   * of it after a crash can never launch a second run.
   *
   * `onLaunchable` is called inside the transaction, once the lock is held and its read found the
   * run launchable now (worktree free, a slot open; never for a queued run), as the writes go
   * out: from then on no other launch can take the worktree (each waits for the lock, then
   * sees this run active), so the launch snapshot may begin while the commit travels.
   * A transaction run again calls it again. It must not throw.
   *
   * @returns the `started` (or queued) message, `run`: the run row as committed (RETURNING, so a
   *   launch spawns without reading it back), and, for a queued run, its place in line.
   * @throws BatonError `worktree_busy` when another run is active in the same worktree root;
   *   `max_active` when `maxActive` runs are already active (both only without `queue`);
   *   `queue_full` when the conversation already has `queue.maxQueued` queued runs;
   *   `duplicate_inbound` when `inbound` was already handled.
   */
  async createRun(
    run: NewRunRow,
    started: NewDelivery | ((place: QueuePlace | undefined) => NewDelivery),
    limits: ActiveLimits,
    now: Date,
    inbound?: InboundKey,
    queue?: QueuePolicy,
    onLaunchable?: () => void,
  ): Promise<DeliveryRow & { queued?: QueuePlace; run: RunRow }> {
    const { node: maxActive, fleet: fleetMaxActive } = limitsOf(limits);
    try {
      return await this.db.transaction(async (tx) => {
        // The lock and the read of every active and queued run go out together, pipelined: one
        // round trip instead of four. The server still runs them in order, and in READ
        // COMMITTED the read takes its snapshot when it starts, after the lock is held.
        const [, rows] = await Promise.all([
          tx.execute(sql`select pg_advisory_xact_lock(${LAUNCH_LOCK_KEY})`),
          tx
            .select({
              id: runs.id,
              status: runs.status,
              worktreeRoot: runs.worktreeRoot,
              onNode: run.node ? sql<boolean>`${onNode(run.node)}` : sql<boolean>`true`,
            })
            .from(runs)
            .where(IS_OPEN)
            .orderBy(runs.createdAt),
        ]);
        const active = rows.filter((r) => r.status !== 'queued');
        // max_active counts this node's runs; the worktree lock is global.
        const mineActive = run.node ? active.filter((r) => r.onNode).length : active.length;
        const fleetFull = fleetMaxActive !== undefined && active.length >= fleetMaxActive;
        const busyId = active.find((r) => r.worktreeRoot === run.worktreeRoot)?.id;
        const busy = busyId ? [{ id: busyId }] : [];
        const full = mineActive >= maxActive || fleetFull;
        const waiting = queue ? rows.filter((r) => r.status === 'queued' && r.onNode) : [];
        const sameRoot = waiting.filter((w) => w.worktreeRoot === run.worktreeRoot);
        let place: QueuePlace | undefined;
        const notBefore = queue?.notBefore;
        if (busy[0] || full || sameRoot.length > 0 || notBefore) {
          if (!queue) {
            if (busy[0]) throw worktreeBusyRefusal(run.worktreeRoot, busy[0].id);
            throw fleetFull ? fleetMaxActiveRefusal(fleetMaxActive) : maxActiveRefusal(maxActive);
          }
          if ((await queuedInConversation(tx, run.origin)) >= queue.maxQueued) {
            throw queueFullRefusal(queue.maxQueued);
          }
          // Ahead of it: the run holding its worktree and those queued for it; when the machine is
          // full, every queued run (they take free slots first).
          const ahead = full ? waiting : sameRoot;
          const behind = ahead.at(-1)?.id ?? busy[0]?.id ?? (await this.oldestActiveId(tx));
          place = {
            behind: behind ?? 'an active run',
            ahead: Math.max(notBefore ? 0 : 1, ahead.length + (busy[0] ? 1 : 0)),
            ...(notBefore ? { notBefore } : {}),
          };
        }
        const message = typeof started === 'function' ? started(place) : started;
        // Called before the writes are built, so that a hook that throws leaves no write in
        // flight to reject unheard; the writes still go out first (drizzle sends a query when its
        // promise is awaited, a microtask after this synchronous call).
        if (!place) onLaunchable?.();
        // The three writes go out together too (pipelined), in this order: a handled inbound
        // event is found first and rolls all back, as a unique violation of the run does.
        const [, [runRow], [row]] = await Promise.all([
          inbound ? markInboundHandledIn(tx, inbound) : undefined,
          tx
            .insert(runs)
            .values(place ? { ...run, status: 'queued', launch: queue!.launch, notBefore: notBefore ?? null } : run)
            .returning(),
          tx.insert(deliveries).values(toDeliveryValues(message, now)).returning(),
        ]);
        return place ? { ...row!, queued: place, run: runRow! } : { ...row!, run: runRow! };
      });
    } catch (err) {
      if (isUniqueViolation(err, 'runs_one_active_per_worktree')) throw worktreeBusyRefusal(run.worktreeRoot);
      throw err;
    }
  }

  private async oldestActiveId(tx: Pick<Db, 'select'>): Promise<string | undefined> {
    const [row] = await tx.select({ id: runs.id }).from(runs).where(IS_ACTIVE).orderBy(runs.createdAt).limit(1);
    return row?.id;
  }

  /**
   * Stores a launch routed to another node as `queued` for `run.node`, with its
   * `queued for node …` message, and wakes that node (`NOTIFY baton_runs, '<node>'`, sent at
   * commit). Nothing is checked against this node's disk or this node's `max_active`: the owning
   * node resolves the target, takes its worktree lock and counts its slots when it claims the run.
   *
   * @throws BatonError `queue_full` when the conversation already has `maxQueued` queued runs;
   *   `duplicate_inbound` when `inbound` was already handled.
   */
  async createRoutedRun(
    run: NewRunRow & { node: string; launch: QueuedLaunchJson },
    started: NewDelivery,
    maxQueued: number,
    now: Date,
    inbound?: InboundKey,
  ): Promise<DeliveryRow> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`select pg_advisory_xact_lock(${LAUNCH_LOCK_KEY})`);
      if ((await queuedInConversation(tx, run.origin)) >= maxQueued) {
        throw queueFullRefusal(maxQueued);
      }
      if (inbound) await markInboundHandledIn(tx, inbound);
      await tx.insert(runs).values({ ...run, status: 'queued' });
      const [row] = await tx.insert(deliveries).values(toDeliveryValues(started, now)).returning();
      await tx.execute(sql`select pg_notify(${RUNS_CHANNEL}, ${run.node})`);
      return row!;
    });
  }
}
