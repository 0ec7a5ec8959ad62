/**
 * A `baton ask` whose run was queued behind another run of the same checkout: it waits for its
 * turn and sees the run through, whichever process starts it — this one, or the service.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunId } from '../core/ids.js';
import type { RunSupervisor } from '../harness/supervisor.js';
import type { RunStore } from '../store/runs-repo.js';

/** How often a waiting ask looks at its queued run, in ms. */
export const QUEUE_POLL_MS = 500;

/** What waiting for a queued run uses of the core `baton ask` built. */
export interface QueuedRunDeps {
  /** The dispatcher's queue side: marks the runs this process sees through, starts queued runs. */
  dispatcher: { waitFor(runId: RunId, waits?: boolean): void; startQueued(): Promise<void> };
  store: { runs: Pick<RunStore['runs'], 'getRun'>; outbox: Pick<RunStore['outbox'], 'deliveriesOfRun'> };
  supervisor: Pick<RunSupervisor, 'supervisorId'>;
}

/** Statuses of a run that has not ended. */
const OPEN = new Set(['queued', 'starting', 'running']);

/**
 * Waits until the queued run `runId` starts, trying to start it here each time (the dispatcher
 * starts only the runs this process waits for), then, when another process (the service) took
 * it, follows it to its end and prints its messages from the database. A run this process took
 * is left running for the caller to await (`supervisor.idle()`); its messages come through this
 * process's own outbox.
 *
 * @param stopped true once the owner asked to stop (the caller has cancelled the run).
 * @param printed texts already printed, so none is printed twice.
 * @throws the store's errors (database unavailable).
 */
export async function waitForTurn(
  runtime: QueuedRunDeps,
  runId: RunId,
  printed: ReadonlySet<string>,
  print: (line: string) => void,
): Promise<void> {
  const { dispatcher, store, supervisor } = runtime;
  const seen = new Set((await store.outbox.deliveriesOfRun(runId)).map((d) => d.id));
  dispatcher.waitFor(runId);
  let run = await store.runs.getRun(runId);
  try {
    while (run?.status === 'queued') {
      await dispatcher.startQueued();
      run = await store.runs.getRun(runId);
      if (run?.status !== 'queued') break;
      await sleep(QUEUE_POLL_MS);
      run = await store.runs.getRun(runId);
    }
  } finally {
    dispatcher.waitFor(runId, false);
  }
  if (!run || (OPEN.has(run.status) && run.supervisor === supervisor.supervisorId)) return;
  for (;;) {
    const ended = !OPEN.has(run.status);
    for (const delivery of await store.outbox.deliveriesOfRun(runId)) {
      if (seen.has(delivery.id)) continue;
      seen.add(delivery.id);
      if (!printed.has(delivery.body)) print(delivery.body);
    }
    if (ended) return;
    await sleep(QUEUE_POLL_MS);
    const now = await store.runs.getRun(runId);
    if (!now) return;
    run = now;
  }
}
