/**
 * Which node a launch goes to: the node whose `[workspace] roots` hold the
 * target. A target may name its node (`buildbox:~/code/app`, in `in:` or as a `[projects]`
 * alias); an absolute path under another live node's roots and under none of this node's goes to
 * that node; everything else stays here (and meets this node's workspace gate as before).
 */
import { isAbsolute, normalize } from 'node:path';
import { BatonError } from '../core/errors.js';
import { splitNodeTarget } from '../core/node-target.js';
import { isInside } from '../harness/workspace.js';
import type { NodeView } from './nodes.js';

/** Where a launch runs. */
export type Route =
  /** Here; `target` is what this node's workspace gate resolves (the node prefix dropped). */
  | { kind: 'local'; target: string | undefined }
  /**
   * On node `node`, which resolves `path` against its own roots when it takes the run; addressed
   * to its process `instance` (the newest live start of that name) when the node list has it.
   */
  | { kind: 'remote'; node: string; path: string; instance?: string };

/** What {@link routeLaunch} needs to know. */
export interface RouteContext {
  /** This node's `[node] name`. */
  self: string;
  /** This node's `[workspace] roots`, absolute. */
  roots: readonly string[];
  /** `[projects]` alias → absolute path or `node:path`. */
  projects: ReadonlyMap<string, string>;
  /** The fleet's nodes (this one included), from the `nodes` table. */
  nodes: readonly NodeView[];
}

/**
 * Decides where a launch for `target` (`in:` value, else the conversation default, else
 * `[workspace] default`) runs.
 *
 * @throws BatonError `node_unknown` when the target names a node that has no row in `nodes`;
 *   `node_unavailable` when every node of that name is dead (silent past `dead_after_seconds`).
 */
export function routeLaunch(target: string | undefined, context: RouteContext): Route {
  if (target === undefined) return { kind: 'local', target };
  const expanded = context.projects.get(target) ?? target;
  const named = splitNodeTarget(expanded);
  if (named) {
    if (named.node === context.self) return { kind: 'local', target: named.path };
    assertNodeLive(named.node, context.nodes, target);
    return remote(named.node, named.path, context.nodes);
  }
  if (!isAbsolute(expanded)) return { kind: 'local', target };
  const path = normalize(expanded);
  if (context.roots.some((root) => isInside(path, root))) return { kind: 'local', target };
  const owner = context.nodes.find(
    (n) => n.alive && !n.self && n.name !== context.self && n.roots.some((root) => isInside(path, root)),
  );
  if (!owner) return { kind: 'local', target };
  return remote(owner.name, path, context.nodes);
}

/**
 * A route to node `name`, addressed to its newest live instance: a process of that name killed
 * and started again may still show a fresh heartbeat for a while, and the run is the new one's.
 */
function remote(name: string, path: string, nodes: readonly NodeView[]): Route {
  const live = nodes
    .filter((n) => n.alive && n.name === name)
    .sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
  const instance = live.at(-1)?.instance;
  return { kind: 'remote', node: name, path, ...(instance !== undefined ? { instance } : {}) };
}

/**
 * @throws BatonError `node_unknown` / `node_unavailable` (see {@link routeLaunch}).
 */
function assertNodeLive(name: string, nodes: readonly NodeView[], target: string): void {
  const rows = nodes.filter((n) => n.name === name);
  if (rows.some((n) => n.alive)) return;
  const known = [...new Set(nodes.filter((n) => n.alive).map((n) => n.name))].sort();
  if (rows.length === 0) {
    throw new BatonError(
      'node_unknown',
      `No node named ${name} is in this fleet now (for ${target}): no running baton has [node] name = "${name}" — it never started, was stopped, or was declared lost. Live nodes: ${known.join(', ') || 'none'}. Start baton there with the same DATABASE_URL, or fix the name.`,
      { details: { node: name } },
    );
  }
  const silent = Math.min(...rows.map((n) => n.silentSeconds));
  throw new BatonError(
    'node_unavailable',
    `Node ${name} is not answering (last heartbeat ${silent} s ago), so nothing can run there now. Start baton on ${name} again, then relaunch.`,
    { details: { node: name } },
  );
}
