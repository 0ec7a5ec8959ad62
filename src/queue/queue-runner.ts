/**
 * The queue runner: starts, in this process, every queued run whose slot is free. It handles no
 * message; a launch that was queued, a run's end and the periodic reconciliation call it.
 */
import type { RunId } from '../core/ids.js';
import { outcomeTarget } from '../harness/supervisor.js';
import type { RunRow } from '../store/schema.js';
import { startedText } from '../wording/runs.js';
import type { QueueDeps } from './deps.js';
import { prepareRouted } from './routed-runs.js';
import { passesSpawnGates } from './spawn-check.js';

/** Starts queued runs, one pass at a time in this process. */
export class QueueRunner {
  private pass: Promise<void> | undefined;
  private again = false;
  /** Queued runs this process waits for (see {@link QueueDeps.queueScope}). */
  private readonly waiting = new Set<string>();

  constructor(private readonly deps: QueueDeps) {}

  /**
   * Starts every queued run whose slot is free: claimed through the database, so any number of
   * processes may call it and each run starts once. Each claimed run gets a `started` notice.
   * Never throws: a failure is logged and the next call retries.
   */
  async startQueued(): Promise<void> {
    // One pass at a time in this process (a NOTIFY, a run end and the timer may overlap): a call
    // during a pass makes it run once more, and waits for that.
    if (this.pass) {
      this.again = true;
      return this.pass;
    }
    this.pass = (async () => {
      do {
        this.again = false;
        await this.startQueuedOnce();
      } while (this.again);
    })().finally(() => {
      this.pass = undefined;
    });
    return this.pass;
  }

  /**
   * Names a queued run this process will see through, so that {@link startQueued} may start it
   * under `queueScope: 'own'`; `false` takes it back (the process gives up waiting).
   */
  waitFor(runId: RunId, waits = true): void {
    if (waits) this.waiting.add(runId);
    else this.waiting.delete(runId);
  }

  private async startQueuedOnce(): Promise<void> {
    const claimed = await this.claim();
    const { deps } = this;
    for (const run of claimed) {
      const spawn = await passesSpawnGates(deps, run);
      if (!spawn) {
        // Its slot is free again: another queued run may take it in one more pass.
        this.again = true;
        continue;
      }
      deps.logger.info({ runId: run.id, vendor: run.vendor, cwd: run.cwd }, 'queued run starting');
      deps.supervisor.start(run, spawn.request, spawn.timeoutMs);
      await deps.outbox
        .send({
          runId: run.id as RunId,
          kind: 'notice',
          target: { ...outcomeTarget(run) },
          body: startedText(run, run.parentRunId ?? undefined, undefined, undefined, run.branch ?? undefined),
        })
        .catch((err: unknown) => deps.logger.warn({ err, runId: run.id }, 'could not announce a queued run starting'));
    }
  }

  /** The queued runs this pass claimed; none on a failure, which is logged. */
  private async claim(): Promise<RunRow[]> {
    const { deps } = this;
    try {
      // Nothing queued (the common case at a run's end): no config read, no launch lock, which
      // the next launch would otherwise wait behind. A routed run is queued too.
      if (!(await deps.store.queue.hasQueued())) return [];
      // config.toml as it is now: a node that takes only routed runs gets no command that would
      // re-read it, and `baton approve` / `baton grant path` there must still apply.
      await deps.refreshConfig?.();
      // Before the gate below: a node that cannot run them refuses runs routed to it.
      if (deps.fleet) await prepareRouted(deps);
      const config = deps.config();
      if (!config.harness.enabled || !config.harness.approved) return [];
      const only = deps.queueScope === 'own' ? [...this.waiting] : undefined;
      if (only?.length === 0) return [];
      return await deps.store.queue.claimQueued(
        { node: config.harness.maxActive, fleet: config.node.fleetMaxActive },
        deps.supervisor.supervisorId,
        deps.fleet?.name,
        deps.fleet?.instance,
        only,
        deps.clock.now(),
      );
    } catch (err) {
      deps.logger.warn({ err }, 'could not claim queued runs; the next reconciliation retries');
      return [];
    }
  }
}
