/**
 * The verify step, between the judge and the finish: a run whose agent completed and that carries
 * a verify plan (fixed at launch from the owner's config or message) has its commands run before
 * its end is recorded, so its outcome says whether the change passed them.
 */
import { join } from 'node:path';
import type { LiveFacts, VerificationJson } from '../../types/run-facts.js';
import type { Classified } from '../outcome.js';
import { buildChildEnv } from '../spawn-env.js';
import { runVerification } from '../verify.js';
import type { RunServices } from './context.js';
import type { RunRow } from '../../store/schema.js';
import type { ActiveRun, InstalledVendor } from './types.js';

/** The verification's log in the run directory. */
export const VERIFY_LOG_FILE = 'verify.log';

/**
 * Verifies a completed run. The run still holds its worktree lock meanwhile, and a stop of the
 * run (or the service's) stops the command under way.
 *
 * @returns undefined when the run is not verified (no plan, or its agent did not complete).
 */
export async function verifyRun(
  services: RunServices,
  end: {
    run: RunRow;
    entry?: ActiveRun | undefined;
    installed: InstalledVendor | undefined;
    runDir: string;
    /** The run's live facts as its agent ended (files changed, tokens), kept in the live status. */
    live?: LiveFacts | undefined;
  },
  classified: Classified,
): Promise<VerificationJson | undefined> {
  const { deps, stopping } = services;
  const { run, entry, installed } = end;
  const plan = run.options.verify;
  if (!plan || plan.commands.length === 0 || classified.status !== 'completed' || !installed) return undefined;
  const first = plan.commands[0]!;
  let env: Record<string, string>;
  try {
    env = buildChildEnv(installed.vendor, deps.baseEnv, deps.homes, run.id);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { reason: 'verify_not_run', command: first, ran: 0, exitCode: null, durationMs: 0, why };
  }
  const stop = new AbortController();
  const onStopping = (): void => stop.abort();
  stopping.addEventListener('abort', onStopping, { once: true });
  if (stopping.aborted) stop.abort();
  if (entry) entry.stop = async () => stop.abort();
  deps.logger.info({ runId: run.id, commands: plan.commands.length }, 'verifying the completed run');
  // The live status says the run is being verified, not that the agent still works.
  const status = deps.status;
  status?.editor.update(run, () =>
    status.describe({
      status: 'running',
      elapsedMs: deps.clock.now().getTime() - run.createdAt.getTime(),
      live: {
        ...(end.live ?? { recentSteps: [], filesChanged: [], tokens: 0 }),
        step: deps.words.verifyingStep(plan.commands),
      },
      detail: run.options.progress,
    }),
  );
  try {
    return await runVerification({
      runId: run.id,
      plan,
      cwd: run.cwd,
      env,
      cgroups: deps.cgroups ?? { unavailable: 'not configured' },
      logPath: join(end.runDir, VERIFY_LOG_FILE),
      maxLogBytes: deps.limits.maxRunArtifactBytes,
      killGraceMs: deps.limits.killGraceMs,
      signal: stop.signal,
    });
  } finally {
    stopping.removeEventListener('abort', onStopping);
    if (entry) entry.stop = async () => {};
  }
}
