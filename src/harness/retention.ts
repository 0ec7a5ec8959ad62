/**
 * Retention: run directories of runs that ended more than
 * `artifact_retention_days` ago, stray run directories older than that, and trace days older
 * than that are deleted at start and daily. Active runs are never touched.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../core/clock.js';
import { isRunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';

/** What a sweep removed. */
export interface SweepResult {
  runDirs: number;
  traceDays: number;
}

/** Options of {@link sweepArtifacts}. */
export interface SweepOptions {
  runsDir: string;
  tracesDir: string;
  retentionMs: number;
  store: RunStore;
  clock: Clock;
  logger: Logger;
}

/** Deletes expired run directories and trace days. Errors on single entries are logged and skipped. */
export async function sweepArtifacts(options: SweepOptions): Promise<SweepResult> {
  const cutoffMs = options.clock.nowMs() - options.retentionMs;
  const result: SweepResult = { runDirs: 0, traceDays: 0 };
  for (const name of await list(options.runsDir)) {
    if (!isRunId(name)) continue;
    const path = join(options.runsDir, name);
    try {
      const run = await options.store.runs.getRun(name);
      if (run && (run.status === 'starting' || run.status === 'running')) continue;
      const endedMs = run?.endedAt?.getTime() ?? (await stat(path)).mtimeMs;
      if (endedMs >= cutoffMs) continue;
      await rm(path, { recursive: true, force: true });
      result.runDirs += 1;
    } catch (err) {
      options.logger.warn({ err, path }, 'retention sweep skipped a run directory');
    }
  }
  const cutoffDay = new Date(cutoffMs).toISOString().slice(0, 10);
  for (const day of await list(options.tracesDir)) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || day >= cutoffDay) continue;
    await rm(join(options.tracesDir, day), { recursive: true, force: true }).then(
      () => {
        result.traceDays += 1;
      },
      (err: unknown) => options.logger.warn({ err, day }, 'retention sweep skipped a trace day'),
    );
  }
  if (result.runDirs > 0 || result.traceDays > 0)
    options.logger.info({ ...result }, 'retention sweep removed expired artifacts');
  return result;
}

async function list(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
