/**
 * Node identity in a fleet of baton processes sharing one PostgreSQL database.
 * Each service process registers a row in `nodes` at start, refreshes its heartbeat every
 * `[node] heartbeat_seconds`, and deletes its row when it stops. A node whose heartbeat is older
 * than `dead_after_seconds` (database time) is dead. On embedded PGlite the fleet is this one
 * process.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { BatonError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { isProcessAlive } from '../core/process.js';
import type { Db } from '../store/database.js';
import { nodes, runs } from '../store/schema.js';

/** One node as /runs, doctor and /health/ready show it. */
export interface NodeView {
  name: string;
  host: string;
  pid: number;
  /** `[workspace] roots` of the node, absolute. */
  roots: string[];
  startedAt: Date;
  heartbeatAt: Date;
  /** Seconds since the last heartbeat, by database time. */
  silentSeconds: number;
  alive: boolean;
  /** This process. */
  self: boolean;
  /** `nodes.instance`: this start of the node's process, which routed runs are addressed to. Absent in views made by hand. */
  instance?: string;
}

/** Options of {@link NodeRegistry}. */
export interface NodeRegistryOptions {
  db: Db;
  name: string;
  /**
   * This node's `[workspace] roots`, absolute: a list, or a function giving them as they stand
   * now (the live config: `baton grant path` applies without a restart), written at each heartbeat.
   */
  roots: readonly string[] | (() => readonly string[]);
  /** Heartbeat period, in ms. */
  heartbeatMs: number;
  /** A node silent longer than this is dead, in ms. */
  deadAfterMs: number;
  logger: Logger;
  /** This host's name. @default os.hostname() */
  host?: string;
  /** This process's pid. @default process.pid */
  pid?: number;
  /** Whether `pid` is a live baton process on this host. @default {@link localBatonProcess} */
  isLocalBaton?: (pid: number) => boolean;
}

/** This process's row in `nodes`, kept fresh while the service runs. */
export class NodeRegistry {
  /**
   * `host:pid:random`, unique per process life: the holder id of this process's leases, and the
   * address of the runs routed to this node (`runs.node_instance`).
   */
  readonly instance: string;
  private readonly host: string;
  private readonly pid: number;
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  /** Monotonic ms since which every heartbeat succeeded; undefined while they fail. */
  private freshSince: number | undefined;

  constructor(private readonly options: NodeRegistryOptions) {
    this.host = options.host ?? hostname();
    this.pid = options.pid ?? process.pid;
    this.instance = `${this.host}:${this.pid}:${randomBytes(4).toString('hex')}`;
  }

  /** The node name (`[node] name`, else the host name). */
  get name(): string {
    return this.options.name;
  }

  /**
   * Writes this node's row and starts the heartbeat. Routing goes by name, so a name is one
   * live process: a start whose name a live node of the fleet already has is refused. A row of
   * the same name left on this host by a process that is gone (killed, then restarted before
   * its heartbeat went stale) is this node's previous process: its queued runs are this
   * instance's from now on.
   *
   * @throws BatonError `node_name_taken` when another live process has this name; the database
   *   error when the write fails (start-up fails with it).
   */
  async start(): Promise<void> {
    await this.register();
    this.freshSince = performance.now();
    this.timer = setInterval(() => {
      // One beat at a time; stop() waits for the one in flight.
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  /** The roots to write now. */
  private roots(): string[] {
    const { roots } = this.options;
    return [...(typeof roots === 'function' ? roots() : roots)];
  }

  /** Checks the name and writes the row in one transaction (see {@link start}). */
  private async register(): Promise<void> {
    const { db, name, deadAfterMs } = this.options;
    const isLocalBaton = this.options.isLocalBaton ?? localBatonProcess;
    await db.transaction(async (tx) => {
      // Two processes starting with one name at once: the second sees the first one's row.
      await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`baton-node:${name}`}))`);
      const rows = await tx
        .select({
          instance: nodes.instance,
          host: nodes.host,
          pid: nodes.pid,
          silent: sql<string>`extract(epoch from now() - ${nodes.heartbeatAt})`,
        })
        .from(nodes)
        .where(eq(nodes.name, name));
      const previous: string[] = [];
      for (const row of rows) {
        if (row.host === this.host && (row.pid === this.pid || !isLocalBaton(row.pid))) {
          previous.push(row.instance);
          continue;
        }
        const silentSeconds = Math.max(0, Math.round(Number(row.silent)));
        if (Number(row.silent) > deadAfterMs / 1000) continue;
        throw new BatonError(
          'node_name_taken',
          `The node name ${name} is taken: baton on ${row.host} (pid ${row.pid}) runs as node ${name} on this database (last heartbeat ${silentSeconds} s ago), and two live nodes with one name would split its routed runs. ` +
            `Give this node its own name ([node] name = "${this.host === row.host ? `${name}-2` : this.host}" in config.toml), or stop that baton first. A node that stopped without saying so frees its name ${Math.round(deadAfterMs / 1000)} s after its last heartbeat ([node] dead_after_seconds).`,
          { details: { node: name, host: row.host, pid: row.pid } },
        );
      }
      await this.insertRow(tx);
      if (previous.length > 0) {
        await tx
          .update(runs)
          .set({ nodeInstance: this.instance })
          .where(and(eq(runs.status, 'queued'), eq(runs.node, name), inArray(runs.nodeInstance, previous)));
      }
    });
  }

  private async insertRow(db: Pick<Db, 'insert'> = this.options.db): Promise<void> {
    const { name } = this.options;
    await db.insert(nodes).values({
      instance: this.instance,
      name,
      host: this.host,
      pid: this.pid,
      roots: this.roots(),
      startedAt: sql`now()` as unknown as Date,
      heartbeatAt: sql`now()` as unknown as Date,
    });
  }

  /** The heartbeat write in flight, if any. */
  private beating: Promise<void> | undefined;
  /** Set by {@link stop}: no beat writes the row again. */
  private stopped = false;

  private async beat(): Promise<void> {
    try {
      const updated = await this.options.db
        .update(nodes)
        .set({ heartbeatAt: sql`now()` as unknown as Date, roots: this.roots() })
        .where(eq(nodes.instance, this.instance))
        .returning({ instance: nodes.instance });
      // Removed by hand or by a cleanup: write it again, so the fleet sees this node.
      if (updated.length === 0 && !this.stopped) await this.insertRow();
      if (this.failing) this.options.logger.info({ node: this.name }, 'node heartbeat written again');
      this.failing = false;
      this.freshSince ??= performance.now();
    } catch (err) {
      if (!this.failing)
        this.options.logger.warn({ err, node: this.name }, 'node heartbeat failed; retrying every beat');
      this.failing = true;
      this.freshSince = undefined;
    }
  }

  /**
   * Every node with a row, oldest start first, with liveness by database time.
   *
   * @throws the database error.
   */
  async list(): Promise<NodeView[]> {
    return this.listWithInstances();
  }

  private async listWithInstances(): Promise<(NodeView & { instance: string })[]> {
    const deadAfterS = this.options.deadAfterMs / 1000;
    const rows = await this.options.db
      .select({
        instance: nodes.instance,
        name: nodes.name,
        host: nodes.host,
        pid: nodes.pid,
        roots: nodes.roots,
        startedAt: nodes.startedAt,
        heartbeatAt: nodes.heartbeatAt,
        silent: sql<string>`extract(epoch from now() - ${nodes.heartbeatAt})`,
      })
      .from(nodes)
      .orderBy(asc(nodes.startedAt));
    return rows.map((r) => {
      const silentSeconds = Math.max(0, Math.round(Number(r.silent)));
      return {
        instance: r.instance,
        name: r.name,
        host: r.host,
        pid: r.pid,
        roots: r.roots,
        startedAt: r.startedAt,
        heartbeatAt: r.heartbeatAt,
        silentSeconds,
        alive: Number(r.silent) <= deadAfterS,
        self: r.instance === this.instance,
      };
    });
  }

  /**
   * Nodes to declare lost: silent longer than `dead_after_seconds` by database time. Empty
   * unless this node's own heartbeats have all succeeded for at least that long plus one beat —
   * after a database outage every node is silent, and none may judge the others before they had
   * the time to beat again.
   *
   * @throws the database error.
   */
  async lostNodes(): Promise<(NodeView & { instance: string })[]> {
    const { deadAfterMs, heartbeatMs } = this.options;
    if (this.freshSince === undefined || performance.now() - this.freshSince < deadAfterMs + heartbeatMs) return [];
    const list = await this.listWithInstances();
    return list.filter((n) => !n.alive && !n.self);
  }

  /** Removes a lost node's row once its runs are reconciled (a later beat of it writes it again). */
  async forget(instance: string): Promise<void> {
    await this.options.db.delete(nodes).where(eq(nodes.instance, instance));
  }

  /** Stops the heartbeat and deletes this node's row (best effort: a failure is logged). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A beat still in flight would otherwise find the row deleted and write it again.
    await this.beating;
    await this.options.db
      .delete(nodes)
      .where(eq(nodes.instance, this.instance))
      .catch((err: unknown) => this.options.logger.warn({ err }, 'could not remove this node from the nodes table'));
  }
}

/** Options of {@link describeNodes}. */
export interface DescribeNodesOptions {
  /**
   * Whether `pid` is a live baton process on this host. @default signal 0, then
   * `/proc/<pid>/cmdline` naming baton (without procfs, a live pid is taken for baton)
   */
  isLocalBaton?: (pid: number) => boolean;
}

/**
 * One line per node for `/runs` and the banner: `name (this) · host pid · alive|dead Ns`.
 * Two live nodes with one name are flagged (routing by name needs names to be unique). A row with
 * this node's name and host whose pid is no longer a live baton process is this node's previous
 * process (killed, then restarted before its heartbeat went stale), said so, and not flagged;
 * node-loss still reconciles it once it is silent past `dead_after_seconds`.
 */
export function describeNodes(list: readonly NodeView[], options: DescribeNodesOptions = {}): string[] {
  const isLocalBaton = options.isLocalBaton ?? localBatonProcess;
  const self = list.find((n) => n.self);
  const previous = (n: NodeView): boolean =>
    !!self && !n.self && n.name === self.name && n.host === self.host && n.pid !== self.pid && !isLocalBaton(n.pid);
  const liveNames = new Map<string, number>();
  for (const n of list) if (n.alive && !previous(n)) liveNames.set(n.name, (liveNames.get(n.name) ?? 0) + 1);
  return list.map((n) => {
    if (previous(n))
      return `${n.name} · ${n.host} pid ${n.pid} · previous process of this node: pid ${n.pid} exited without stopping; its runs are reconciled`;
    const state = n.alive ? 'alive' : `dead (silent ${n.silentSeconds} s)`;
    const clash =
      n.alive && (liveNames.get(n.name) ?? 0) > 1
        ? ' — two live nodes share this name; give each its own [node] name'
        : '';
    return `${n.name}${n.self ? ' (this)' : ''} · ${n.host} pid ${n.pid} · ${state}${clash}`;
  });
}

/** A live pid whose `/proc/<pid>/cmdline` names baton; without procfs, any live pid. */
export function localBatonProcess(pid: number): boolean {
  if (!isProcessAlive(pid)) return false;
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return true;
  }
  return /baton/i.test(cmdline);
}
