/**
 * After a run's end: the plan windows its stream reported are stored for `/usage`, and a window at
 * or past `[harness] quota_warn_percent` is announced once per period (claimed in the database,
 * so once across nodes and runs). Best effort: a failure is logged, the run's end stands.
 */
import type { RunRow } from '../../store/schema.js';
import type { StreamFacts } from '../vendors/types.js';
import type { RunServices } from './context.js';
import { notifyRun } from './notices.js';

/** The default of `[harness] quota_warn_percent`. */
const DEFAULT_WARN_PERCENT = 80;

/** Stores the windows `facts` carry and posts the warnings due; never throws. */
export async function notePlanWindows(services: RunServices, run: RunRow, facts: StreamFacts): Promise<void> {
  const { deps } = services;
  const windows = facts.quota?.windows;
  if (!windows || windows.length === 0) return;
  try {
    const warn = await deps.store.planWindows.record(
      run.node ?? '',
      run.vendor,
      windows.map((w) => ({
        window: w.name,
        usedPercent: w.usedPercent,
        resetsAt: w.resetsAt ? new Date(w.resetsAt) : undefined,
      })),
      deps.clock.now(),
      deps.limits.quotaWarnPercent ?? DEFAULT_WARN_PERCENT,
    );
    // A run that hit the limit already says so in its outcome.
    if (facts.quota?.exhausted) return;
    for (const w of warn) {
      if (!w.resetsAt) continue;
      notifyRun(
        services,
        run,
        deps.words.quotaWarning({
          vendor: run.vendor,
          window: w.window,
          usedPercent: w.usedPercent,
          resetsAt: w.resetsAt,
        }),
      );
    }
  } catch (err) {
    deps.logger.warn({ err, runId: run.id }, 'could not store the plan windows a run reported');
  }
}
