/** Where a launch runs: this node, or another node of the fleet. */
import { normalize } from 'node:path';
import type { BatonConfig } from '../../config/index.js';
import { routeLaunch, type Route } from '../../fleet/route.js';
import { isInside } from '../../harness/workspace.js';
import type { RunRow } from '../../store/schema.js';
import type { DispatcherDeps } from '../deps.js';

/**
 * Where a launch runs: a resume goes to its parent's node; anything else by
 * {@link routeLaunch}. Without a fleet (`baton ask`) everything runs here. `config` is the live
 * one: `[workspace] roots` granted or revoked since the start decide here too.
 *
 * @throws BatonError `node_unknown`, `node_unavailable`.
 */
export async function routeOf(
  fleet: DispatcherDeps['fleet'],
  config: BatonConfig,
  parent: RunRow | undefined,
  target: string | undefined,
): Promise<Route> {
  if (!fleet) return { kind: 'local', target };
  if (parent) {
    if (!parent.node || parent.node === fleet.name) return { kind: 'local', target: parent.cwd };
    return routeLaunch(`${parent.node}:${parent.cwd}`, {
      self: fleet.name,
      roots: config.workspace.roots,
      projects: config.projects,
      nodes: await fleet.list(),
    });
  }
  // Reading the nodes costs a query: only for a target that may be elsewhere. A path inside
  // this node's own roots runs here whatever the other nodes are (routeLaunch), e.g. the
  // conversation's or [workspace] default directory.
  const expanded = target === undefined ? undefined : (config.projects.get(target) ?? target);
  if (expanded === undefined || (!expanded.startsWith('/') && !/^[A-Za-z0-9][A-Za-z0-9_.-]*:/.test(expanded)))
    return { kind: 'local', target };
  if (expanded.startsWith('/') && config.workspace.roots.some((root) => isInside(normalize(expanded), root)))
    return { kind: 'local', target };
  return routeLaunch(target, {
    self: fleet.name,
    roots: config.workspace.roots,
    projects: config.projects,
    nodes: await fleet.list(),
  });
}
