/**
 * Routed runs addressed to this node, made ready to claim: each one's directory resolved against
 * this node's roots (the workspace gate), its worktree made; a run the gate refuses ends
 * `failed` with the refusal as its outcome.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { outcomeTarget } from '../harness/supervisor.js';
import { resolveWorkspace } from '../harness/workspace.js';
import { discardLeftoverRunWorktree, type RunWorktree } from '../harness/worktrees.js';
import type { RunRow } from '../store/schema.js';
import { runTag } from '../wording/run-tag.js';
import type { QueueDeps } from './deps.js';
import { discardWorktree, worktreeFor } from './run-worktree.js';
import { workspaceSettingsOf } from './workspace-settings.js';

/** Where a routed run was asked to run (`runs.launch.route`). */
type RouteJson = NonNullable<NonNullable<RunRow['launch']>['route']>;

/**
 * Places every routed run addressed to this node (`deps.fleet` must be set).
 *
 * @throws the store's errors (a refusal is recorded, never thrown).
 */
export async function prepareRouted(deps: QueueDeps): Promise<void> {
  const fleet = deps.fleet!;
  for (const run of await deps.store.queue.routedRuns(fleet.name, fleet.instance)) {
    const route = run.launch?.route;
    if (!route) continue;
    const made: { worktree?: RunWorktree | undefined } = {};
    try {
      await placeRouted(deps, run, route, made);
    } catch (err) {
      // A database error may hide a write that was made: the worktree stays, and the next
      // pass removes it before it makes the worktree again (see placeRouted).
      if (!isBatonError(err)) throw err;
      if (made.worktree) await discardWorktree(made.worktree, deps.logger);
      await refuseRouted(deps, run, route, err);
    }
  }
}

/**
 * The node's gates on one routed run, then its directory and worktree written to its row.
 * `made.worktree` is set as soon as a worktree exists, so the caller can remove it on a refusal.
 *
 * @throws BatonError the gates' refusals; the store's errors.
 */
async function placeRouted(
  deps: QueueDeps,
  run: RunRow,
  route: RouteJson,
  made: { worktree?: RunWorktree | undefined },
): Promise<void> {
  const name = deps.fleet!.name;
  const config = deps.config();
  if (!config.harness.enabled) throw new BatonError('harness_disabled', `Coding agents are disabled on node ${name}.`);
  if (!config.harness.approved)
    throw new BatonError(
      'not_approved',
      `Coding agents are not yet approved on node ${name}. Approve with \`baton approve\` there (or set [harness] approved = true).`,
    );
  if (!deps.vendors.has(run.vendor))
    throw new BatonError(
      'vendor_missing',
      `The ${run.vendor} CLI was not found on PATH on node ${name} when baton started there. Install it there, then restart baton there.`,
    );
  // The row is what this node would run: its options meet the launch gates here too.
  deps.gates.assertRowOptions(run);
  const resolved = await resolveWorkspace(route.target, undefined, workspaceSettingsOf(config, deps));
  // What an earlier pass killed (or cut from the database) after `git worktree add` left.
  if (deps.worktreesDir && (route.worktree || config.workspace.worktrees === 'per-run'))
    await discardLeftoverRunWorktree(resolved.cwd, run.id, deps.worktreesDir);
  const worktree = await worktreeFor(config, deps.worktreesDir, resolved.cwd, run.id as RunId, route.worktree);
  made.worktree = worktree;
  const place = worktree ?? resolved;
  const placed = await deps.store.queue.placeRouted(run.id, {
    cwd: place.cwd,
    worktreeRoot: place.worktreeRoot,
    branch: worktree?.branch ?? run.branch,
    sourceRoot: worktree?.sourceRoot ?? run.sourceRoot,
  });
  if (!placed && worktree) await discardWorktree(worktree, deps.logger);
}

/** Ends a routed run this node refused `failed`, with the refusal as its outcome. */
async function refuseRouted(deps: QueueDeps, run: RunRow, route: RouteJson, err: BatonError): Promise<void> {
  const name = deps.fleet!.name;
  deps.logger.info({ runId: run.id, code: err.code }, 'routed run refused by this node');
  const body = `${runTag(run.id)} failed · ${run.vendor} · ${name}:${route.target} · refused by node ${name}
${err.message}
Reason: ${err.code}`;
  const outcome = await deps.store.queue.refuseQueued(
    run.id,
    err.code,
    err.message,
    { runId: run.id as RunId, kind: 'outcome', target: outcomeTarget(run), body },
    deps.clock.now(),
  );
  if (outcome) await deps.outbox.attempt(outcome);
}
