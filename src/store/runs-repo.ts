/**
 * Run and delivery persistence. Every state change that causes a message writes that message's
 * delivery row in the same transaction, so an outcome is never lost between the
 * two writes.
 */
import { and, desc, eq, inArray, isNotNull, isNull, lte, notInArray, sql, type SQL } from 'drizzle-orm';
import { BatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import type { Db } from './database.js';
import { GroupCommit } from './group-commit.js';
import {
  ACTIVE_RUN_STATUSES,
  conversationDefaults,
  deliveries,
  inboundEvents,
  nodes,
  runMessages,
  runs,
  type ButtonJson,
  type DeliveryRow,
  type DeliveryTargetJson,
  type DocumentJson,
  type NewRunRow,
  type ReshapeJson,
  type RunRow,
  type RunStatus,
  type DenialJson,
  type UsageJson,
  type QueuedLaunchJson,
} from './schema.js';

/** One raw inbound update for the inbox. */
export interface InboxEntry {
  /** The same key the channel's normalized message carries (Telegram: `botId:update_id`). */
  dedupeKey: string;
  receivedAt: Date;
  /** The platform's update as received (JSON). */
  payload: unknown;
}

/** Identifies the inbound event that asked for something. */
export interface InboundKey {
  platform: string;
  dedupeKey: string;
}

/** A message to write to the outbox. */
export interface NewDelivery {
  runId: RunId | null;
  /** What the message is, for listings: `started`, `outcome`, `notice`, `reply`. */
  kind: string;
  target: DeliveryTargetJson;
  body: string;
  /** How `body` is written: `markdown` is rendered per channel. @default `plain` */
  format?: 'plain' | 'markdown';
  /** Files sent after the text. @default none */
  documents?: DocumentJson[];
  /** Buttons under the message (its last part when split). @default none */
  buttons?: ButtonJson[];
}

/** Identifies a conversation: a chat, or a thread in it. */
export interface ConversationKey {
  platform: string;
  chatId: string;
  threadId?: string | undefined;
}

/** Where a queued run stands: the run it waits behind and how many must start before it. */
export interface QueuePlace {
  behind: string;
  ahead: number;
}

/**
 * The `max_active` caps a start must respect: this node's (`[harness] max_active`, counting the
 * runs of the node) and, optionally, the fleet's (`[node] fleet_max_active`, counting every
 * active run in the database). A plain number is the node's cap alone.
 */
export type ActiveLimits = number | { node: number; fleet?: number | undefined };

function limitsOf(limits: ActiveLimits): { node: number; fleet: number | undefined } {
  return typeof limits === 'number' ? { node: limits, fleet: undefined } : { node: limits.node, fleet: limits.fleet };
}

/** How {@link RunStore.createRun} queues a run it cannot start now. */
export interface QueuePolicy {
  /** Most queued runs one conversation may have (`[harness] max_queued`). */
  maxQueued: number;
  /** What the run starts with once claimed. */
  launch: QueuedLaunchJson;
}

/** The terminal facts of a run. */
export interface RunTerminal {
  status: Exclude<RunStatus, 'starting' | 'running' | 'queued'>;
  reason: string | null;
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: UsageJson | null;
  /** Tool calls the CLI denied; stored as given, none when absent. */
  denials?: readonly DenialJson[];
  vendorSessionId?: string | null;
  exitCode?: number | null;
  exitSignal?: string | null;
  endedAt: Date;
}

/**
 * True for a delivery with no earlier pending delivery of the same run (rows of no run always).
 * Raw SQL so the outer `deliveries` columns are qualified whatever statement embeds it; the status
 * is a literal, not a parameter, so the planner sees the partial index's predicate.
 */
const NO_EARLIER_PENDING = sql.raw(
  `not exists (select 1 from deliveries as earlier where earlier.run_id = deliveries.run_id and earlier.id < deliveries.id and earlier.status = 'pending')`,
);

/** Advisory lock key that serializes launches, so the `max_active` count can't be raced. */
export const LAUNCH_LOCK_KEY = 715042;

/** `'a', 'b'`: run statuses as SQL literals (enum values: nothing to escape). */
const statusLiterals = (statuses: readonly RunStatus[]): SQL =>
  sql.raw(statuses.map((status) => `'${status}'`).join(', '));

/**
 * The status conditions of the launch and queue reads, written into the SQL as
 * literals, not bound as parameters: the planner then knows from the column's statistics that few
 * runs match and reads them through `runs_status`. Bound as parameters, a cached generic plan of
 * the prepared statement (PostgreSQL may switch to one after five executions) cannot know it, and
 * walked all 100,000 runs in `created_at` order instead (test/store/run-queries-plan.test.ts).
 */
const IS_OPEN = sql`${runs.status} in (${statusLiterals([...ACTIVE_RUN_STATUSES, 'queued'])})`;
const IS_ACTIVE = sql`${runs.status} in (${statusLiterals(ACTIVE_RUN_STATUSES)})`;
const IS_QUEUED = sql`${runs.status} = 'queued'`;

/**
 * The `NOTIFY` channel a routed run wakes its node on; the payload is the node
 * name. A node that misses it (not listening, connection lost) finds the run by polling.
 */
export const RUNS_CHANNEL = 'baton_runs';

/**
 * Queued runs instance `instance` of a node may take: those addressed to it, to no instance (runs
 * from before instances were addressed), or to an instance that is gone from `nodes` (stopped, or
 * declared lost). Another live process of the same name never takes a run addressed to this one.
 */
function forInstance(instance: string | undefined): SQL {
  if (instance === undefined) return sql`true`;
  return sql`(${runs.nodeInstance} is null or ${runs.nodeInstance} = ${instance} or not exists (select 1 from ${nodes} where ${nodes.instance} = ${runs.nodeInstance}))`;
}

/** Runs of node `name`, or of no node (runs from before routing count everywhere). */
function onNode(name: string) {
  return sql`(${runs.node} = ${name} or ${runs.node} is null)`;
}

/** The run repository: the only module that writes `runs`, `deliveries` and `inbound_events`. */
export class RunStore {
  constructor(private readonly db: Db) {}

  /** The database this store writes to, for the repositories of other tables. */
  get database(): Db {
    return this.db;
  }

  /**
   * Stores raw inbound updates in the inbox as `received`, before the platform is told they
   * arrived (Telegram: before the next `getUpdates` offset confirms them). Updates already known
   * are left as they are.
   */
  async recordInbox(platform: string, entries: readonly InboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insert(inboundEvents)
      .values(
        entries.map((e) => ({
          platform,
          dedupeKey: e.dedupeKey,
          receivedAt: e.receivedAt,
          state: 'received' as const,
          payload: e.payload,
        })),
      )
      .onConflictDoNothing();
  }

  /**
   * Claims an inbound event by its dedupe key before anything acts on it: a new event, or one the
   * inbox holds as `received`, becomes `claimed` by `claimant` (`host:pid`).
   *
   * @returns true when this caller may act on the event; false when it was claimed or handled
   *   before (do nothing).
   */
  async recordInbound(platform: string, dedupeKey: string, receivedAt: Date, claimant = ''): Promise<boolean> {
    const claimed = await this.db
      .insert(inboundEvents)
      .values({ platform, dedupeKey, receivedAt, state: 'claimed', claimedBy: claimant })
      .onConflictDoUpdate({
        target: [inboundEvents.platform, inboundEvents.dedupeKey],
        set: { state: 'claimed', claimedBy: claimant },
        setWhere: sql`${inboundEvents.state} = 'received'`,
      })
      .returning({ key: inboundEvents.dedupeKey });
    return claimed.length === 1;
  }

  /** Marks a claimed inbound event handled (never acted on again) and drops its raw payload. */
  async markInboundHandled(platform: string, dedupeKey: string): Promise<void> {
    await this.db
      .update(inboundEvents)
      .set({ state: 'handled', payload: null })
      .where(and(eq(inboundEvents.platform, platform), eq(inboundEvents.dedupeKey, dedupeKey)));
  }

  /** Deletes an inbox row nobody will act on (a stranger's message, an update baton ignores). */
  async forgetInbound(platform: string, dedupeKey: string): Promise<void> {
    await this.db
      .delete(inboundEvents)
      .where(
        and(
          eq(inboundEvents.platform, platform),
          eq(inboundEvents.dedupeKey, dedupeKey),
          sql`${inboundEvents.state} <> 'handled'`,
        ),
      );
  }

  /**
   * Returns `claimant`'s claims on stored updates of `platform` (raw payload kept) to
   * `received`, except the dedupe keys in `inFlight`.
   *
   * @returns how many were released.
   */
  async releaseClaimsOf(platform: string, claimant: string, inFlight: readonly string[]): Promise<number> {
    const released = await this.db
      .update(inboundEvents)
      .set({ state: 'received', claimedBy: null })
      .where(
        and(
          eq(inboundEvents.platform, platform),
          eq(inboundEvents.claimedBy, claimant),
          sql`${inboundEvents.state} = 'claimed'`,
          sql`${inboundEvents.payload} is not null`,
          inFlight.length > 0 ? notInArray(inboundEvents.dedupeKey, [...inFlight]) : undefined,
        ),
      )
      .returning({ key: inboundEvents.dedupeKey });
    return released.length;
  }

  /** Raw updates of `platform` stored but not yet claimed, oldest first (replayed at start). */
  async receivedInbound(platform: string): Promise<InboxEntry[]> {
    const rows = await this.db
      .select({
        dedupeKey: inboundEvents.dedupeKey,
        receivedAt: inboundEvents.receivedAt,
        payload: inboundEvents.payload,
      })
      .from(inboundEvents)
      .where(
        and(
          eq(inboundEvents.platform, platform),
          sql`${inboundEvents.state} = 'received'`,
          sql`${inboundEvents.payload} is not null`,
        ),
      )
      .orderBy(inboundEvents.receivedAt);
    return rows;
  }

  /**
   * Returns the claims of service processes that died (`isDead(claimant)`) to `received`, so the
   * inbox hands those events out again. Only claimants whose id starts with `claimantPrefix`
   * (this host) are considered.
   *
   * @returns how many events were released.
   */
  async releaseInboundClaims(claimantPrefix: string, isDead: (claimant: string) => boolean): Promise<number> {
    const claimants = await this.db
      .selectDistinct({ claimedBy: inboundEvents.claimedBy })
      .from(inboundEvents)
      .where(
        and(sql`${inboundEvents.state} = 'claimed'`, sql`starts_with(${inboundEvents.claimedBy}, ${claimantPrefix})`),
      );
    const dead = claimants.map((c) => c.claimedBy ?? '').filter((c) => c !== '' && isDead(c));
    if (dead.length === 0) return 0;
    const released = await this.db
      .update(inboundEvents)
      .set({ state: 'received', claimedBy: null })
      .where(and(sql`${inboundEvents.state} = 'claimed'`, inArray(inboundEvents.claimedBy, dead)))
      .returning({ key: inboundEvents.dedupeKey });
    return released.length;
  }

  /**
   * Inserts a new `starting` run and its `started` message in one transaction, holding the lock
   * domain: one active run per worktree root (a partial unique index) and at most `maxActive`
   * active runs (counted under a transaction-scoped advisory lock).
   *
   * With `queue`, a run that would be refused for a busy worktree or `max_active` —
   * or that would overtake a run already queued for its worktree — is stored `queued` instead,
   * with `queue.launch` to start it later, and `started` is called with its place in line.
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
        if (busy[0] || full || sameRoot.length > 0) {
          if (!queue) {
            if (busy[0]) throw worktreeBusy(run.worktreeRoot, busy[0].id);
            throw fleetFull ? fleetMaxActiveError(fleetMaxActive) : maxActiveError(maxActive);
          }
          const origin = run.origin;
          const [mine] = await tx
            .select({ count: sql<number>`count(*)::int` })
            .from(runs)
            .where(
              and(
                eq(runs.status, 'queued'),
                sql`${runs.origin}->>'platform' = ${origin.platform}`,
                sql`${runs.origin}->>'chatId' = ${origin.chatId}`,
              ),
            );
          if ((mine?.count ?? 0) >= queue.maxQueued) {
            throw queueFull(queue.maxQueued);
          }
          // Ahead of it: the run holding its worktree and those queued for it; when the machine is
          // full, every queued run (they take free slots first).
          const ahead = full ? waiting : sameRoot;
          const behind = ahead.at(-1)?.id ?? busy[0]?.id ?? (await this.oldestActiveId(tx));
          place = { behind: behind ?? 'an active run', ahead: Math.max(1, ahead.length + (busy[0] ? 1 : 0)) };
        }
        const message = typeof started === 'function' ? started(place) : started;
        // Called before the writes are built, so that a hook that throws leaves no write in
        // flight to reject unheard; the writes still go out first (drizzle sends a query when its
        // promise is awaited, a microtask after this synchronous call).
        if (!place) onLaunchable?.();
        // The three writes go out together too (pipelined), in this order: a handled inbound
        // event is found first and rolls all back, as a unique violation of the run does.
        const [, [runRow], [row]] = await Promise.all([
          inbound ? markInboundHandled(tx, inbound) : undefined,
          tx
            .insert(runs)
            .values(place ? { ...run, status: 'queued', launch: queue!.launch } : run)
            .returning(),
          tx.insert(deliveries).values(toDeliveryValues(message, now)).returning(),
        ]);
        return place ? { ...row!, queued: place, run: runRow! } : { ...row!, run: runRow! };
      });
    } catch (err) {
      if (isUniqueViolation(err, 'runs_one_active_per_worktree')) throw worktreeBusy(run.worktreeRoot);
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
      const [mine] = await tx
        .select({ count: sql<number>`count(*)::int` })
        .from(runs)
        .where(
          and(
            eq(runs.status, 'queued'),
            sql`${runs.origin}->>'platform' = ${run.origin.platform}`,
            sql`${runs.origin}->>'chatId' = ${run.origin.chatId}`,
          ),
        );
      if ((mine?.count ?? 0) >= maxQueued) {
        throw queueFull(maxQueued);
      }
      if (inbound) await markInboundHandled(tx, inbound);
      await tx.insert(runs).values({ ...run, status: 'queued' });
      const [row] = await tx.insert(deliveries).values(toDeliveryValues(started, now)).returning();
      await tx.execute(sql`select pg_notify(${RUNS_CHANNEL}, ${run.node})`);
      return row!;
    });
  }

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
    return this.db.transaction(async (tx) => {
      const ended = await tx
        .update(runs)
        .set({ status, reason, errorMessage, endedAt: now, launch: null })
        .where(and(eq(runs.id, id), eq(runs.status, 'queued')))
        .returning({ id: runs.id });
      if (ended.length === 0) return null;
      const [row] = await tx.insert(deliveries).values(toDeliveryValues(outcome, now)).returning();
      return row!;
    });
  }

  /**
   * Moves queued runs whose slot is free to `starting` under `supervisor`, oldest first (issue
   * #17): a run waits while its worktree holds an active run (or an older queued one claimed in
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
   * @returns the claimed runs, each with its `launch`.
   */
  async claimQueued(
    limits: ActiveLimits,
    supervisor: string,
    node?: string,
    instance?: string,
    only?: readonly string[],
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
    return this.db.transaction(async (tx) => {
      const ended = await tx
        .update(runs)
        .set({ status: 'cancelled', reason, endedAt: now, launch: null })
        .where(and(eq(runs.id, id), eq(runs.status, 'queued')))
        .returning({ id: runs.id });
      if (ended.length === 0) return null;
      const [row] = await tx.insert(deliveries).values(toDeliveryValues(outcome, now)).returning();
      return row!;
    });
  }

  /** Moves a `starting` run to `running` once its process exists. */
  async markRunning(id: RunId, pid: number | null, startedAt: Date): Promise<void> {
    await this.db
      .update(runs)
      .set({ status: 'running', pid, startedAt })
      .where(and(eq(runs.id, id), eq(runs.status, 'starting')));
  }

  /**
   * Asks whichever process supervises a run to cancel it.
   *
   * @returns false when the run is not active (finished meanwhile, or unknown).
   */
  async requestCancel(id: string, reason: 'owner_cancel' | 'stop'): Promise<boolean> {
    const updated = await this.db
      .update(runs)
      .set({ cancelRequested: reason })
      .where(and(eq(runs.id, id), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
      .returning({ id: runs.id });
    return updated.length === 1;
  }

  /** Active runs with a pending cancel request among `ids`. */
  async pendingCancels(ids: readonly string[]): Promise<{ id: string; reason: 'owner_cancel' | 'stop' }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .select({ id: runs.id, reason: runs.cancelRequested })
      .from(runs)
      .where(
        and(
          inArray(runs.id, [...ids]),
          inArray(runs.status, [...ACTIVE_RUN_STATUSES]),
          sql`${runs.cancelRequested} is not null`,
        ),
      );
    return rows.map((r) => ({ id: r.id, reason: r.reason === 'stop' ? 'stop' : 'owner_cancel' }));
  }

  /**
   * Of `ids` (runs this process supervises), those the database already shows ended: another
   * node declared this one lost and ended them `interrupted · node_lost`.
   */
  async endedAmong(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(inArray(runs.id, [...ids]), notInArray(runs.status, [...ACTIVE_RUN_STATUSES])));
    return rows.map((r) => r.id);
  }

  /** Active runs supervised by exactly `supervisor` (`host:pid`). */
  async activeRunsOf(supervisor: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(and(inArray(runs.status, [...ACTIVE_RUN_STATUSES]), eq(runs.supervisor, supervisor)));
  }

  /**
   * Runs ended `interrupted · node_lost` whose supervisor was on `host` (`host:` prefix), ended
   * after `since`: a node that comes back stops what may still run of them.
   */
  async lostRunsOnHost(host: string, since: Date): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(
        and(
          eq(runs.status, 'interrupted'),
          eq(runs.reason, 'node_lost'),
          sql`starts_with(${runs.supervisor}, ${`${host}:`})`,
          sql`${runs.endedAt} >= ${since.toISOString()}::timestamptz`,
        ),
      );
  }

  /** Flags that a run's event spool stopped at its cap. */
  async markArtifactTruncated(id: RunId): Promise<void> {
    await this.db.update(runs).set({ artifactTruncated: true }).where(eq(runs.id, id));
  }

  /** Stores the vendor's session id as soon as the stream reveals it. */
  async setVendorSession(id: RunId, vendorSessionId: string): Promise<void> {
    await this.db
      .update(runs)
      .set({ vendorSessionId: storableText(vendorSessionId) })
      .where(eq(runs.id, id));
  }

  /**
   * Ends an active run and writes its outcome message in the same transaction.
   *
   * @returns the outcome delivery, or null when the run was no longer active (already ended by
   *   a cancel or a restart), in which case nothing is written.
   */
  async finishRun(id: RunId, terminal: RunTerminal, outcome: NewDelivery, now: Date): Promise<DeliveryRow | null> {
    return this.db.transaction(async (tx) => {
      const ended = await tx
        .update(runs)
        .set({
          status: terminal.status,
          reason: terminal.reason,
          finalMessage: storableOrNull(terminal.finalMessage),
          errorMessage: storableOrNull(terminal.errorMessage),
          usage: terminal.usage ?? null,
          denials: [...(terminal.denials ?? [])],
          exitCode: terminal.exitCode ?? null,
          exitSignal: terminal.exitSignal ?? null,
          endedAt: terminal.endedAt,
          ...(terminal.vendorSessionId ? { vendorSessionId: terminal.vendorSessionId } : {}),
        })
        .where(and(eq(runs.id, id), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
        .returning({ id: runs.id });
      if (ended.length === 0) return null;
      const [row] = await tx.insert(deliveries).values(toDeliveryValues(outcome, now)).returning();
      return row!;
    });
  }

  /** Active runs whose supervisor id starts with `supervisorPrefix` (e.g. this host). */
  async activeRunsSupervisedBy(supervisorPrefix: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(
        and(inArray(runs.status, [...ACTIVE_RUN_STATUSES]), sql`starts_with(${runs.supervisor}, ${supervisorPrefix})`),
      );
  }

  /** Counts for doctor and `/runs`: active runs, pending deliveries, dead letters. */
  async counts(): Promise<{ active: number; pendingDeliveries: number; deadLetters: number }> {
    const [active] = await this.db
      .select({ n: sql<number>`count(*)::int` })
      .from(runs)
      .where(inArray(runs.status, [...ACTIVE_RUN_STATUSES]));
    const byStatus = await this.db
      .select({ status: deliveries.status, n: sql<number>`count(*)::int` })
      .from(deliveries)
      .where(inArray(deliveries.status, ['pending', 'dead']))
      .groupBy(deliveries.status);
    const of = (status: string): number => byStatus.find((r) => r.status === status)?.n ?? 0;
    return { active: active?.n ?? 0, pendingDeliveries: of('pending'), deadLetters: of('dead') };
  }

  /** Dead-lettered deliveries, newest first. */
  async deadLetters(limit: number): Promise<DeliveryRow[]> {
    return this.db
      .select()
      .from(deliveries)
      .where(eq(deliveries.status, 'dead'))
      .orderBy(desc(deliveries.createdAt))
      .limit(limit);
  }

  /** All active runs, oldest first. */
  async activeRuns(): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(inArray(runs.status, [...ACTIVE_RUN_STATUSES]))
      .orderBy(runs.createdAt);
  }

  /**
   * Claims up to `limit` due pending deliveries for sending: rows locked by another process are
   * skipped (`FOR UPDATE SKIP LOCKED`), a row of a run waits while an earlier row of the same run
   * is pending (other runs are not held up), and each claimed row's next attempt moves `leaseMs`
   * ahead, so no other process picks it up while this one sends it. The rows come back with that
   * new `nextAttemptAt`, which {@link claimInRunOrder} checks.
   */
  async claimDueDeliveries(now: Date, limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    return this.db.transaction(async (tx) => {
      const due = await tx
        .select()
        .from(deliveries)
        // The status is a literal, not a bound parameter: a cached generic plan can then prove the
        // partial index's predicate (deliveries_due … where status = 'pending') and use it.
        .where(and(sql`${deliveries.status} = 'pending'`, lte(deliveries.nextAttemptAt, now), NO_EARLIER_PENDING))
        .orderBy(deliveries.nextAttemptAt)
        .limit(limit)
        .for('update', { skipLocked: true });
      if (due.length === 0) return [];
      const leaseUntil = new Date(now.getTime() + leaseMs);
      await tx
        .update(deliveries)
        .set({ nextAttemptAt: leaseUntil })
        .where(
          inArray(
            deliveries.id,
            due.map((d) => d.id),
          ),
        );
      return due.map((d) => ({ ...d, nextAttemptAt: leaseUntil }));
    });
  }

  /**
   * Takes a run's delivery for sending now, in run order: succeeds only while the row is still
   * pending, no earlier row of its run is pending, and its `nextAttemptAt` is still the one the
   * caller saw (so of two processes racing for it, one wins). Moves its next attempt `leaseMs`
   * ahead.
   *
   * @returns the current row, or undefined when it is not (or no longer) this caller's to send.
   */
  async claimInRunOrder(row: DeliveryRow, now: Date, leaseMs: number): Promise<DeliveryRow | undefined> {
    const [claimed] = await this.db
      .update(deliveries)
      .set({ nextAttemptAt: new Date(now.getTime() + leaseMs) })
      .where(
        and(
          eq(deliveries.id, row.id),
          eq(deliveries.status, 'pending'),
          eq(deliveries.nextAttemptAt, row.nextAttemptAt),
          NO_EARLIER_PENDING,
        ),
      )
      .returning();
    return claimed;
  }

  /** The oldest pending delivery of a run, or undefined. */
  async firstPendingOfRun(runId: string): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.runId, runId), eq(deliveries.status, 'pending')))
      .orderBy(deliveries.id)
      .limit(1);
    return row;
  }

  /**
   * The `started` delivery of a run (the message its live status edits), or undefined. Its
   * `platformMessageIds` hold the platform ids of the parts sent so far, recorded as each part is
   * delivered; empty while the message has not been delivered.
   */
  async startedDelivery(runId: string): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .select()
      .from(deliveries)
      .where(and(eq(deliveries.runId, runId), eq(deliveries.kind, 'started')))
      .orderBy(deliveries.id)
      .limit(1);
    return row;
  }

  /**
   * Puts a dead letter back in the queue, due now, with its attempts reset
   * (`/redeliver ID`). Parts already sent stay sent.
   *
   * @returns the row, or undefined when `id` is not a dead letter (never dead, or redelivered already).
   */
  async redeliver(id: number, now: Date): Promise<DeliveryRow | undefined> {
    const [row] = await this.db
      .update(deliveries)
      .set({
        status: 'pending',
        attempts: 0,
        lastError: null,
        nextAttemptAt: new Date(now.getTime() + INLINE_LEASE_MS),
      })
      .where(and(eq(deliveries.id, id), eq(deliveries.status, 'dead')))
      .returning();
    return row;
  }

  /** Records a run's new wall-clock limit (the "+30 min" button), in whole minutes. */
  async setTimeoutMinutes(id: string, minutes: number): Promise<void> {
    await this.db
      .update(runs)
      .set({ options: sql`jsonb_set(${runs.options}, '{timeoutMinutes}', to_jsonb(${minutes}::int))` })
      .where(eq(runs.id, id));
  }

  /** Writes a message that no run state change caused (command answers, refusals). */
  async enqueue(delivery: NewDelivery, now: Date): Promise<DeliveryRow> {
    const [row] = await this.db.insert(deliveries).values(toDeliveryValues(delivery, now)).returning();
    return row!;
  }

  /** One run by id, or undefined. */
  async getRun(id: string): Promise<RunRow | undefined> {
    const [row] = await this.db.select().from(runs).where(eq(runs.id, id)).limit(1);
    return row;
  }

  /**
   * Every run that got its own git worktree not yet recorded as removed, newest first.
   *
   * @param node with it, only the runs of that node (`runs.node`), or of its host for runs
   *   written without a node: a fleet shares the database, not the disks the worktrees are on.
   */
  async runsWithWorktree(node?: { name: string; host: string }): Promise<RunRow[]> {
    const mine = node
      ? sql`(${runs.node} = ${node.name} or (${runs.node} is null and starts_with(${runs.supervisor}, ${`${node.host}:`})))`
      : undefined;
    return this.db
      .select()
      .from(runs)
      .where(and(isNotNull(runs.branch), isNull(runs.worktreeRemovedAt), mine))
      .orderBy(desc(runs.createdAt));
  }

  /** Records that the worktree at `worktreeRoot` is gone, on every run that shared it (resumes do). */
  async markWorktreeRemoved(worktreeRoot: string, at: Date): Promise<void> {
    await this.db
      .update(runs)
      .set({ worktreeRemovedAt: at })
      .where(and(eq(runs.worktreeRoot, worktreeRoot), isNotNull(runs.branch), isNull(runs.worktreeRemovedAt)));
  }

  /** The most recent runs, newest first. */
  async recentRuns(limit: number): Promise<RunRow[]> {
    return this.db.select().from(runs).orderBy(desc(runs.createdAt)).limit(limit);
  }

  /** The run a platform message (one baton sent) belongs to, for resume-by-reply. */
  async findRunByMessage(platform: string, chatId: string, messageId: string): Promise<RunRow | undefined> {
    const [row] = await this.db
      .select({ run: runs })
      .from(runMessages)
      .innerJoin(runs, eq(runs.id, runMessages.runId))
      .where(
        and(eq(runMessages.platform, platform), eq(runMessages.chatId, chatId), eq(runMessages.messageId, messageId)),
      )
      .limit(1);
    return row?.run;
  }

  /** Sets a conversation's default run directory (`/use`). */
  async setConversationDefault(key: ConversationKey, cwd: string, now: Date): Promise<void> {
    await this.db
      .insert(conversationDefaults)
      .values({ ...key, threadId: key.threadId ?? '', cwd, updatedAt: now })
      .onConflictDoUpdate({
        target: [conversationDefaults.platform, conversationDefaults.chatId, conversationDefaults.threadId],
        set: { cwd, updatedAt: now },
      });
  }

  /** A conversation's default run directory, or undefined. */
  async conversationDefault(key: ConversationKey): Promise<string | undefined> {
    const [row] = await this.db
      .select({ cwd: conversationDefaults.cwd })
      .from(conversationDefaults)
      .where(
        and(
          eq(conversationDefaults.platform, key.platform),
          eq(conversationDefaults.chatId, key.chatId),
          eq(conversationDefaults.threadId, key.threadId ?? ''),
        ),
      )
      .limit(1);
    return row?.cwd;
  }

  /** The newest run started from a thread (Slack `thread_ts`), for a reply in that thread. */
  async latestRunInThread(platform: string, chatId: string, threadId: string): Promise<RunRow | undefined> {
    const [row] = await this.db
      .select()
      .from(runs)
      .where(
        and(
          sql`${runs.origin}->>'platform' = ${platform}`,
          sql`${runs.origin}->>'chatId' = ${chatId}`,
          sql`${runs.origin}->>'threadId' = ${threadId}`,
        ),
      )
      .orderBy(desc(runs.createdAt))
      .limit(1);
    return row;
  }

  /** One delivery by id. */
  async getDelivery(id: number): Promise<DeliveryRow | undefined> {
    const [row] = await this.db.select().from(deliveries).where(eq(deliveries.id, id)).limit(1);
    return row;
  }

  /** All deliveries of a run in the order they were written. */
  async deliveriesOfRun(runId: RunId): Promise<DeliveryRow[]> {
    return this.db.select().from(deliveries).where(eq(deliveries.runId, runId)).orderBy(deliveries.id);
  }

  /**
   * Records that parts of a delivery reached the platform: `partsDelivered` is the new total and
   * `messageIds` the platform ids of the parts just sent. Also maps those ids to the run.
   *
   * @returns `laterPendingInRun`: when `done`, whether a later delivery of the same run is still
   *   pending (false when not done or not a run's delivery).
   */
  async recordPartsSent(
    delivery: DeliveryRow,
    partsDelivered: number,
    messageIds: string[],
    done: boolean,
    now: Date,
  ): Promise<{ laterPendingInRun: boolean }> {
    const laterPendingInRun = await this.partsSent.submit({
      id: delivery.id,
      parts: partsDelivered,
      ids: messageIds,
      done,
      at: now.toISOString(),
      run_id: delivery.runId,
      platform: delivery.target.platform,
      chat_id: delivery.target.chatId,
    });
    return { laterPendingInRun };
  }

  /**
   * The writes of {@link recordPartsSent}, several rows to a statement while the service is busy
   * (group commit).
   */
  private readonly partsSent = new GroupCommit<PartsSent, boolean>((batch) => this.writePartsSent(batch), {
    maxBatch: 64,
    retryAlone: isStatementError,
  });

  /**
   * One statement, one round trip for any number of rows (the send loop was four per
   * part — begin, update, insert, commit — and a select for the run's next row): the row updates
   * and the message links are data-modifying CTEs, atomic like the transaction they replace, and
   * the final select says per row whether a later row of its run waits, which is all the outbox
   * needs to go on. The final select sees the table as it was before the statement; a batch never
   * holds two rows of one run (the outbox attempts a run's rows one at a time, and a claim leases
   * only a run's first pending row).
   *
   * @returns `later_pending` per row of `batch`, in order.
   */
  private async writePartsSent(batch: readonly PartsSent[]): Promise<boolean[]> {
    if (new Set(batch.map((b) => b.id)).size === batch.length) return partsSentStatement(this.db, batch);
    // Two records of one delivery (an attempt that outlived its lease and the retry worker's
    // attempt of the same row; rows without a run are not serialized per run): one update can
    // apply only one input row per delivery and drops the other silently. They go in turn, in
    // chunks without a repeated delivery, in one transaction (the batch stays all or nothing).
    return this.db.transaction(async (tx) => {
      const results: boolean[] = [];
      let chunk: PartsSent[] = [];
      for (const item of batch) {
        if (chunk.some((c) => c.id === item.id)) {
          results.push(...(await partsSentStatement(tx, chunk)));
          chunk = [];
        }
        chunk.push(item);
      }
      results.push(...(await partsSentStatement(tx, chunk)));
      return results;
    });
  }

  /**
   * Moves a conversation to a new chat id (a Telegram group upgraded to a supergroup): pending
   * deliveries to the old chat, run origins (so later outcomes and thread lookups follow), and
   * `/use` defaults (one already set in the new chat wins). One transaction.
   */
  async moveConversation(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx
        .update(deliveries)
        .set({ target: sql`jsonb_set(${deliveries.target}, '{chatId}', to_jsonb(${toChatId}::text))` })
        .where(
          and(
            eq(deliveries.status, 'pending'),
            sql`${deliveries.target}->>'platform' = ${platform}`,
            sql`${deliveries.target}->>'chatId' = ${fromChatId}`,
          ),
        );
      await tx
        .update(runs)
        .set({ origin: sql`jsonb_set(${runs.origin}, '{chatId}', to_jsonb(${toChatId}::text))` })
        .where(and(sql`${runs.origin}->>'platform' = ${platform}`, sql`${runs.origin}->>'chatId' = ${fromChatId}`));
      await tx.execute(sql`
        update conversation_defaults as d set chat_id = ${toChatId}
        where d.platform = ${platform} and d.chat_id = ${fromChatId}
          and not exists (select 1 from conversation_defaults n where n.platform = d.platform and n.chat_id = ${toChatId} and n.thread_id = d.thread_id)`);
      await tx
        .delete(conversationDefaults)
        .where(and(eq(conversationDefaults.platform, platform), eq(conversationDefaults.chatId, fromChatId)));
    });
  }

  /** Stores the re-splits of a delivery (see `deliveries.reshapes`). */
  async recordReshapes(id: number, reshapes: readonly ReshapeJson[]): Promise<void> {
    await this.db
      .update(deliveries)
      .set({ reshapes: [...reshapes] })
      .where(eq(deliveries.id, id));
  }

  /** Records the delivery's files, e.g. one the platform refused for good (`refused: true`). */
  async recordDocuments(id: number, documents: readonly DocumentJson[]): Promise<void> {
    await this.db
      .update(deliveries)
      .set({ documents: [...documents] })
      .where(eq(deliveries.id, id));
  }

  /** Records a failed attempt; the row stays `pending` until `nextAttemptAt`, or goes `dead`. */
  async recordAttemptFailed(id: number, error: string, nextAttemptAt: Date, dead: boolean): Promise<void> {
    await this.db
      .update(deliveries)
      .set({
        attempts: sql`${deliveries.attempts} + 1`,
        lastError: storableText(error.slice(0, 2000)),
        nextAttemptAt,
        ...(dead ? { status: 'dead' as const } : {}),
      })
      .where(eq(deliveries.id, id));
  }
}

/**
 * A new row is attempted inline by the process that wrote it; its first retry time is one lease
 * ahead so the retry worker of another process never sends it at the same moment.
 */
export const INLINE_LEASE_MS = 60_000;

/**
 * Text the database can store: PostgreSQL `text` and `jsonb` refuse U+0000 ("invalid byte
 * sequence for encoding UTF8: 0x00"), so a NUL a CLI printed or an error carried becomes U+FFFD
 * instead of failing the write that ends a run. A NUL in what a person typed is refused earlier,
 * with an answer (dispatcher).
 */
export function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}

function storableOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storableText(text);
}

function toDeliveryValues(delivery: NewDelivery, now: Date): typeof deliveries.$inferInsert {
  return {
    runId: delivery.runId,
    kind: delivery.kind,
    target: delivery.target,
    body: storableText(delivery.body),
    ...(delivery.format ? { format: delivery.format } : {}),
    ...(delivery.documents?.length ? { documents: delivery.documents } : {}),
    ...(delivery.buttons?.length ? { buttons: delivery.buttons } : {}),
    nextAttemptAt: new Date(now.getTime() + INLINE_LEASE_MS),
    createdAt: now,
  };
}

function maxActiveError(maxActive: number): BatonError {
  return new BatonError(
    'max_active',
    `${maxActive} coding run${maxActive === 1 ? ' is' : 's are'} already active (max_active = ${maxActive}). ` +
      'Wait for one to finish, /cancel one, or raise [harness] max_active and restart.',
  );
}

function fleetMaxActiveError(fleetMaxActive: number): BatonError {
  return new BatonError(
    'max_active',
    `${fleetMaxActive} coding run${fleetMaxActive === 1 ? ' is' : 's are'} already active across the fleet (fleet_max_active = ${fleetMaxActive}). ` +
      'Wait for one to finish, /cancel one, or raise [node] fleet_max_active on every node and restart them.',
  );
}

function worktreeBusy(root: string, runId?: string): BatonError {
  return new BatonError(
    'worktree_busy',
    `Another run is active in ${root}${runId ? ` (${runId})` : ''}. Wait for it to finish or /cancel it.`,
    { details: { worktreeRoot: root } },
  );
}

/**
 * The statement of {@link RunStore.writePartsSent} for `batch` (no delivery twice), on `db` or a
 * transaction of it.
 */
async function partsSentStatement(db: Pick<Db, 'execute'>, batch: readonly PartsSent[]): Promise<boolean[]> {
  const result = await db.execute<{ later_pending: boolean }>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(batch.map((b, ord) => ({ ...b, ord })))}::jsonb)
        as i(ord int, id bigint, parts int, ids jsonb, done boolean, at timestamptz, run_id text, platform text, chat_id text)
    ), updated as (
      update deliveries d set
        parts_delivered = i.parts,
        platform_message_ids = d.platform_message_ids || i.ids,
        status = case when i.done then 'delivered'::delivery_status else d.status end,
        delivered_at = case when i.done then i.at else d.delivered_at end
      from input i where d.id = i.id
      returning d.id
    ), linked as (
      insert into run_messages (platform, chat_id, message_id, run_id)
      select i.platform, i.chat_id, m.message_id, i.run_id
      from input i cross join lateral jsonb_array_elements_text(i.ids) as m(message_id)
      where i.run_id is not null
      on conflict do nothing
    )
    select i.done and i.run_id is not null
           and exists (select 1 from deliveries later where later.run_id = i.run_id and later.id > i.id and later.status = 'pending') as later_pending
    from input i order by i.ord`);
  const rows = (Array.isArray(result) ? result : (result as { rows: { later_pending: boolean }[] }).rows) as {
    later_pending: boolean;
  }[];
  return rows.map((row) => row.later_pending === true);
}

/** One row's write of {@link RunStore.recordPartsSent}, as the batch statement reads it (JSON). */
interface PartsSent {
  id: number;
  /** The row's new parts_delivered. */
  parts: number;
  /** Platform message ids of the parts just sent. */
  ids: string[];
  done: boolean;
  /** When the row was delivered (ISO 8601), used when `done`. */
  at: string;
  run_id: string | null;
  platform: string;
  chat_id: string;
}

/**
 * True when `err` (or its cause, as drizzle wraps driver errors) is an error the server raised
 * about a row's data: SQLSTATE class 22 (data exception) or 23 (integrity constraint violation,
 * such as a run deleted under its delivery); or a deadlock (40P01) or serialization failure
 * (40001), which a batch can meet where its rows alone would not (it locks several delivery rows
 * at once). The statement was then rolled back and wrote nothing. Not 40003 (completion unknown).
 */
function isStatementError(err: unknown): boolean {
  for (let current: unknown = err, depth = 0; current && depth < 4; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (/^2[23][0-9A-Z]{3}$/.test(code) || code === '40P01' || code === '40001'))
      return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** True when `err` (or its cause, as drizzle wraps driver errors) is a unique violation of `constraint`. */
function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let current: unknown = err, depth = 0; current && depth < 4; depth++) {
    const candidate = current as { code?: unknown; constraint_name?: unknown; constraint?: unknown; cause?: unknown };
    if (
      candidate.code === '23505' &&
      (candidate.constraint_name === constraint || candidate.constraint === constraint)
    ) {
      return true;
    }
    current = candidate.cause;
  }
  return false;
}

/**
 * Marks the inbound event a launch answers as handled, inside the launch's transaction.
 *
 * @throws BatonError `duplicate_inbound` when it was already handled (a redelivery raced this one).
 */
async function markInboundHandled(tx: Pick<Db, 'update'>, inbound: InboundKey): Promise<void> {
  const marked = await tx
    .update(inboundEvents)
    .set({ state: 'handled', payload: null })
    .where(
      and(
        eq(inboundEvents.platform, inbound.platform),
        eq(inboundEvents.dedupeKey, inbound.dedupeKey),
        sql`${inboundEvents.state} <> 'handled'`,
      ),
    )
    .returning({ key: inboundEvents.dedupeKey });
  if (marked.length === 0) throw new BatonError('duplicate_inbound', 'This message was already acted on.');
}

/** The `queue_full` refusal for a conversation holding `maxQueued` queued runs. */
function queueFull(maxQueued: number): BatonError {
  return new BatonError(
    'queue_full',
    `${maxQueued} run${maxQueued === 1 ? ' is' : 's are'} already queued in this conversation (max_queued = ${maxQueued}). Wait for one to start, /cancel one, or raise [harness] max_queued and restart.`,
  );
}
