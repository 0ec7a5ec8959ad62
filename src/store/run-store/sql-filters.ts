/**
 * SQL conditions and keys the launch and queue statements share. The status conditions are
 * written into the SQL as literals, not bound as parameters: the planner then knows from the
 * column's statistics that few runs match and reads them through `runs_status`.
 */
import { sql, type SQL } from 'drizzle-orm';
import { ACTIVE_RUN_STATUSES, nodes, runs, type RunStatus } from '../schema.js';
import type { ActiveLimits } from './types.js';

/** The node's and the fleet's `max_active` caps of {@link ActiveLimits}. */
export function limitsOf(limits: ActiveLimits): { node: number; fleet: number | undefined } {
  return typeof limits === 'number' ? { node: limits, fleet: undefined } : { node: limits.node, fleet: limits.fleet };
}

/**
 * True for a delivery with no earlier pending delivery of the same run (rows of no run always).
 * Raw SQL so the outer `deliveries` columns are qualified whatever statement embeds it; the status
 * is a literal, not a parameter, so the planner sees the partial index's predicate.
 */
export const NO_EARLIER_PENDING = sql.raw(
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
export const IS_OPEN = sql`${runs.status} in (${statusLiterals([...ACTIVE_RUN_STATUSES, 'queued'])})`;
export const IS_ACTIVE = sql`${runs.status} in (${statusLiterals(ACTIVE_RUN_STATUSES)})`;
export const IS_QUEUED = sql`${runs.status} = 'queued'`;

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
export function forInstance(instance: string | undefined): SQL {
  if (instance === undefined) return sql`true`;
  return sql`(${runs.nodeInstance} is null or ${runs.nodeInstance} = ${instance} or not exists (select 1 from ${nodes} where ${nodes.instance} = ${runs.nodeInstance}))`;
}

/** Runs of node `name`, or of no node (runs from before routing count everywhere). */
export function onNode(name: string): SQL {
  return sql`(${runs.node} = ${name} or ${runs.node} is null)`;
}
