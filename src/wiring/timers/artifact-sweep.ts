/** At start and daily: run artifacts and traces past `[harness] artifact_retention` are deleted. */
import { join } from 'node:path';
import type { BatonConfig } from '../../config/index.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { sweepArtifacts } from '../../harness/retention.js';
import type { RunStore } from '../../store/runs-repo.js';
import { startDailyTimer } from './daily.js';

/** What the artifact sweep needs. */
export interface ArtifactSweepDeps {
  runsDir: string;
  batonHome: string;
  config: BatonConfig;
  store: RunStore;
  clock: Clock;
  logger: Logger;
}

/**
 * Sweeps now and daily ({@link startDailyTimer}); a failed sweep is logged.
 *
 * @returns stops the timer.
 */
export function startArtifactSweepTimer(deps: ArtifactSweepDeps): () => void {
  const sweep = () =>
    sweepArtifacts({
      runsDir: deps.runsDir,
      tracesDir: join(deps.batonHome, 'traces'),
      retentionMs: deps.config.harness.artifactRetentionMs,
      store: deps.store,
      clock: deps.clock,
      logger: deps.logger,
    });
  return startDailyTimer(sweep, deps.logger, 'retention sweep failed');
}
