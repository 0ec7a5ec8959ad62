/** At start and daily: run artifacts and traces past `[harness] artifact_retention` are deleted. */
import { join } from 'node:path';
import { sweepArtifacts } from '../../harness/retention.js';
import { startDailyTimer, type RetentionDeps } from './daily.js';

/** What the artifact sweep needs. */
export interface ArtifactSweepDeps extends RetentionDeps {
  runsDir: string;
  batonHome: string;
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
