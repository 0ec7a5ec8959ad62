/** At start and daily: this node's run worktrees past `[workspace] worktree_retention` are removed. */
import { pruneWorktrees } from '../../harness/worktrees.js';
import { startDailyTimer, type RetentionDeps } from './daily.js';

/** What the worktree prune needs. */
export interface WorktreePruneDeps extends RetentionDeps {
  host: string;
}

/**
 * Prunes now and daily ({@link startDailyTimer}); a failed prune is logged.
 *
 * @returns stops the timer.
 */
export function startWorktreePruneTimer(deps: WorktreePruneDeps): () => void {
  const prune = () =>
    pruneWorktrees({
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
      retentionMs: deps.config.workspace.worktreeRetentionMs,
      node: { name: deps.config.node.name, host: deps.host },
    });
  return startDailyTimer(prune, deps.logger, 'worktree retention failed');
}
