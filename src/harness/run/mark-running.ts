/** The step that records a spawned CLI as running, and what happens when the store will not. */
import type { LiveChild, RunContext } from './context.js';

/**
 * Marks the run `running` with its CLI's pid. When the store refuses (the database connection was
 * lost right then) the CLI exists but its row still says `starting` with no pid: nothing else could
 * ever stop it (the reconciler has no pid to signal), and it would go on changing the checkout of
 * a run recorded as not running. It is stopped like a /stop, with its grace, and the run ends on
 * that (`start_unrecorded`, or `shutdown` when the service is stopping); the end goes through
 * terminal.json as any other. Never throws.
 */
export async function markRunning(ctx: RunContext, live: LiveChild): Promise<void> {
  const { deps, stopping } = ctx.services;
  const { pid } = live.child;
  if (pid === undefined) return;
  const { runId, run } = ctx;
  try {
    await deps.store.runs.markRunning(runId, pid, deps.clock.now());
    deps.logger.info({ runId, pid, vendor: run.vendor, cwd: run.cwd, spansMs: ctx.spans }, 'run started');
  } catch (err) {
    const shutdown = stopping.aborted;
    deps.logger.warn(
      { err, runId, pid },
      shutdown ? 'run start interrupted by shutdown' : 'could not record the run as running; stopping its CLI',
    );
    void ctx.entry.stop(shutdown ? { shutdown: true } : { startUnrecorded: true });
  }
}
