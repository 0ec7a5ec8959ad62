/**
 * Every launch gate again for a run just claimed from the queue: the row is what spawns, and it
 * may have changed since its launch — the owner took a root away or revoked consent (both apply
 * live), or the row was edited in the shared database.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import { outcomeTarget } from '../harness/supervisor.js';
import type { RunRow } from '../store/schema.js';
import { runTag } from '../wording/run-tag.js';
import type { QueueDeps, SpawnRequest } from './deps.js';
import { sessionUsageAtSpawn } from './session-usage-at-spawn.js';

/**
 * The claimed run's gates (see dispatch/spawn-gates.ts). A refused run ends `failed` with the
 * gate's code and its outcome message; a failure to record that is logged and the run is left
 * to the reconciliation, unstarted.
 *
 * @returns what the run spawns with, built from the checked row; undefined when refused.
 * @throws what the file system or the database throws while the gates read (not a refusal).
 */
export async function passesSpawnGates(deps: QueueDeps, run: RunRow): Promise<SpawnRequest | undefined> {
  let refusal: BatonError;
  try {
    return await checkedSpawn(deps, run);
  } catch (err) {
    if (!isBatonError(err)) throw err;
    refusal = err;
  }
  deps.logger.info(
    { runId: run.id, code: refusal.code },
    'queued run refused at start: its row no longer passes the launch gates',
  );
  const body = `${runTag(run.id)} failed · ${run.vendor} · ${run.cwd} · refused when its turn came
${refusal.message}
Reason: ${refusal.code}`;
  try {
    const outcome = await deps.store.runs.finishRun(
      run.id as RunId,
      { status: 'failed', reason: refusal.code, errorMessage: refusal.message, endedAt: deps.clock.now() },
      { runId: run.id as RunId, kind: 'outcome', target: outcomeTarget(run), body },
      deps.clock.now(),
    );
    if (outcome) await deps.outbox.attempt(outcome);
  } catch (err) {
    deps.logger.warn({ err, runId: run.id }, 'could not end a queued run the launch gates refused; it stays unstarted');
  }
  return undefined;
}

/** @throws BatonError a gate's refusal, `option_refused` for a resume of a session not its parent's. */
async function checkedSpawn(deps: QueueDeps, run: RunRow): Promise<SpawnRequest> {
  const spawn = await deps.gates.assertSpawnable(run);
  if (!spawn.request.resumeSessionId) return spawn;
  // The session resumed must be the parent's own: an edited row could name any session of
  // this machine's CLI home.
  const parent = run.parentRunId ? await deps.store.runs.getRun(run.parentRunId) : undefined;
  if (!parent || parent.vendorSessionId !== spawn.request.resumeSessionId) {
    throw new BatonError(
      'option_refused',
      "The run's resume session is not its parent run's session. Reply to the run you want to continue, or send the task again.",
    );
  }
  const sessionUsageBefore = await sessionUsageAtSpawn(deps.store, deps.logger, parent);
  return sessionUsageBefore ? { ...spawn, request: { ...spawn.request, sessionUsageBefore } } : spawn;
}
