/** Whether a run's session is still at work, which a resume must wait for. */
import type { RunRow } from '../../store/schema.js';
import { runTag } from '../../wording/run-tag.js';
import type { DispatcherDeps } from '../deps.js';

/**
 * A run still working in `run`'s session: the run itself, a resume of it, or another run of the
 * same vendor session, queued, starting or running. Resuming then would run the session twice.
 */
export async function activeRunOfSession(deps: DispatcherDeps, run: RunRow): Promise<RunRow | undefined> {
  const live = [...(await deps.store.runs.activeRuns()), ...(await deps.store.queue.queuedRuns())];
  return live.find(
    (r) =>
      r.id === run.id ||
      r.parentRunId === run.id ||
      (run.vendorSessionId !== null && r.vendorSessionId === run.vendorSessionId),
  );
}

/** The refusal of a resume while a run still works in the session; `then` says what to do after. */
export function sessionBusy(busy: RunRow, then: string): string {
  return `${runTag(busy.id)} is still ${busy.status === 'queued' ? 'queued' : 'active'} in this session. Wait for its outcome, or /cancel ${busy.id}, then ${then}.`;
}
