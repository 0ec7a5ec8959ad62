/**
 * A node that stops answering: a live node ends the lost node's active runs
 * `interrupted · node_lost` and their outcomes go out through the shared outbox; the lost node's
 * row is then removed. When the lost node comes back, its supervisor sees its runs ended in the
 * database and stops them (supervisor.ts `watchCancelRequests`); a restarted process on that host
 * stops what may still run of them at start ({@link stopLeftoversOfLostRuns}).
 */
import type { Clock } from '../core/clock.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { outcomeText } from '../wording/runs.js';
import { terminateRun } from '../harness/process-tree.js';
import { existingRunCgroup, type CgroupSupport } from '../harness/run-cgroup.js';
import { outcomeTarget } from '../harness/supervisor.js';
import type { Vendor, VendorName } from '../harness/vendors/types.js';
import type { RunStore } from '../store/runs-repo.js';
import type { DeliveryRow } from '../store/schema.js';
import type { NodeRegistry } from './nodes.js';

/** What {@link reconcileLostNodes} needs. */
export interface NodeLossDeps {
  registry: NodeRegistry;
  store: RunStore;
  clock: Clock;
  logger: Logger;
  vendors: ReadonlyMap<VendorName, Vendor>;
}

/**
 * Ends the active runs, and the runs queued for it, of every node silent past `dead_after_seconds` (see
 * {@link NodeRegistry.lostNodes} for when this node may judge) and forgets those nodes.
 *
 * @returns the outcome deliveries written, for the caller to attempt.
 * @throws the database error (the next pass tries again).
 */
export async function reconcileLostNodes(deps: NodeLossDeps): Promise<DeliveryRow[]> {
  const written: DeliveryRow[] = [];
  const lost = await deps.registry.lostNodes();
  // Runs are found by `host:pid`, which a live process that reuses a dead one's pid (a restarted
  // container's pid 1) shares with it: that process's runs are its own, never the lost node's.
  const liveIds =
    lost.length > 0
      ? new Set((await deps.registry.list()).filter((n) => n.alive).map((n) => `${n.host}:${n.pid}`))
      : new Set<string>();
  for (const node of lost) {
    const supervisorId = `${node.host}:${node.pid}`;
    for (const run of liveIds.has(supervisorId) ? [] : await deps.store.runs.activeRunsOf(supervisorId)) {
      const endedAt = deps.clock.now();
      const vendor = deps.vendors.get(run.vendor);
      const resumeCommand =
        run.vendorSessionId && vendor ? vendor.resumeCommand(run.cwd, run.vendorSessionId) : undefined;
      const errorMessage = `Node ${node.name} (${node.host}) stopped answering (no heartbeat for ${node.silentSeconds} s); the run is stopped there when the node comes back and is not relaunched.`;
      const row = await deps.store.runs.finishRun(
        run.id as RunId,
        { status: 'interrupted', reason: 'node_lost', endedAt, errorMessage },
        {
          runId: run.id as RunId,
          kind: 'outcome',
          format: 'markdown',
          target: outcomeTarget(run),
          body: outcomeText({ run, status: 'interrupted', reason: 'node_lost', endedAt, errorMessage, resumeCommand }),
        },
        endedAt,
      );
      deps.logger.warn({ runId: run.id, node: node.name }, 'run interrupted: its node was lost');
      if (row) written.push(row);
    }
    // Runs waiting for the lost node (routed to it, or queued there for a slot) can start on no
    // other node: they end too, unless another live process has its name.
    const sameNameAlive = (await deps.registry.list()).some((n) => n.alive && n.name === node.name);
    for (const run of sameNameAlive ? [] : await deps.store.queue.queuedFor(node.name)) {
      const endedAt = deps.clock.now();
      const errorMessage = `Node ${node.name} (${node.host}) stopped answering (no heartbeat for ${node.silentSeconds} s) before the run started there; it is not relaunched. Launch it again once ${node.name} is back.`;
      const row = await deps.store.queue.refuseQueued(
        run.id,
        'node_lost',
        errorMessage,
        {
          runId: run.id as RunId,
          kind: 'outcome',
          format: 'markdown',
          target: outcomeTarget(run),
          body: outcomeText({ run, status: 'interrupted', reason: 'node_lost', endedAt, errorMessage }),
        },
        endedAt,
        'interrupted',
      );
      deps.logger.warn({ runId: run.id, node: node.name }, 'queued run interrupted: the node it waited for was lost');
      if (row) written.push(row);
    }
    await deps.registry.forget(node.instance);
  }
  return written;
}

/** What {@link stopLeftoversOfLostRuns} needs. */
export interface LeftoverDeps {
  store: RunStore;
  host: string;
  killGraceMs: number;
  cgroups?: CgroupSupport;
  logger: Logger;
  /** Only runs ended after this are looked at. */
  since: Date;
}

/**
 * At start: runs of this host that another node ended `node_lost` may still have processes
 * (the node was cut off, then restarted). They are found by the run's cgroup or by the
 * `BATON_RUN_ID` every process of a run carries — never by the stored pid, which may belong to
 * another process by now.
 *
 * @returns how many processes needed SIGKILL.
 */
export async function stopLeftoversOfLostRuns(deps: LeftoverDeps): Promise<number> {
  let killed = 0;
  for (const run of await deps.store.runs.lostRunsOnHost(deps.host, deps.since)) {
    const cgroup = deps.cgroups ? existingRunCgroup(deps.cgroups, run.id) : undefined;
    const pids = await terminateRun({
      rootPid: undefined,
      runId: run.id,
      graceMs: deps.killGraceMs,
      ...(cgroup ? { trackedPids: cgroup.pids } : {}),
    });
    await cgroup?.killAll(deps.killGraceMs);
    if (pids.length > 0)
      deps.logger.warn({ runId: run.id, pids }, 'stopped processes of a run another node declared lost');
    killed += pids.length;
  }
  return killed;
}
