/** At start and daily: this node's run worktrees past `[workspace] worktree_retention` are removed. */
import type { BatonConfig } from '../../config/index.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { pruneWorktrees } from '../../harness/worktrees.js';
import type { RunStore } from '../../store/runs-repo.js';
import { startDailyTimer } from './daily.js';

/** What the worktree prune needs. */
export interface WorktreePruneDeps {
  config: BatonConfig;
  host: string;
  store: RunStore;
  clock: Clock;
  logger: Logger;
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
