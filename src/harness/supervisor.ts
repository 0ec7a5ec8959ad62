/**
 * The run supervisor: the registry of the runs this process supervises. It starts each run's
 * pipeline (run/execute.ts), and cancels, extends and stops them; the run's steps do the rest.
 */
import { join } from 'node:path';
import type { RunId } from '../core/ids.js';
import type { RunRow } from '../store/schema.js';
import { noTracer } from './traces.js';
import type { LaunchRequest } from './vendors/types.js';
import { newRunContext, type RunServices } from './run/context.js';
import { executeRun } from './run/execute.js';
import { LaunchSnapshots } from './run/launch-snapshots.js';
import type { ActiveRun, SupervisorDeps } from './run/types.js';

export { outcomeTarget } from './run/outcome-target.js';
export { MAX_RUN_WALL_CLOCK_MS, type InstalledVendor, type RunLimits, type SupervisorDeps } from './run/types.js';

/**
 * What {@link RunSupervisor.cancel} achieved: `cancelled` is recorded in the database; `ended`
 * means the run had already ended another way (its outcome says how); `unrecorded` means its
 * processes are stopped but the database has not taken the run's end yet (it is retried).
 */
export type CancelResult =
  | { kind: 'cancelled' }
  | { kind: 'ended'; status: RunRow['status'] | 'already_ended' }
  | { kind: 'unrecorded' };

/** How long a cancel waits for the run's end to reach the database before it answers, in ms. */
const CANCEL_RECORD_WAIT_MS = 10_000;

/** Starts, watches, cancels and finishes runs. */
export class RunSupervisor {
  private readonly active = new Map<RunId, ActiveRun>();
  private cancelPoll: NodeJS.Timeout | undefined;
  /** Aborted at shutdown: pending run-end writes stop retrying and stay in `terminal.json`. */
  private readonly stopping = new AbortController();

  /** What every run's steps share. */
  private readonly services: RunServices;

  /**
   * Called after each run this process supervised has ended (its end recorded or given up): a
   * slot is free, so queued runs may start. Set by the composition root.
   */
  onRunEnded: (() => void) | undefined;

  constructor(private readonly deps: SupervisorDeps) {
    this.services = {
      deps,
      tracer: deps.tracer ?? noTracer,
      stopping: this.stopping.signal,
      snapshots: new LaunchSnapshots(deps.runsDir, deps.logger),
    };
  }

  /**
   * Starts honouring cancel requests that other processes write to the database (`baton cancel`,
   * `/stop` handled by another service process).
   */
  watchCancelRequests(): void {
    const poll = async (): Promise<void> => {
      const ids = [...this.active.keys()];
      for (const request of await this.deps.store.runs.pendingCancels(ids)) {
        void this.cancel(request.id as RunId, request.reason);
      }
      // Another node declared this one lost and ended these runs: stop what
      // still runs of them; their end is written already, so nothing more is sent.
      for (const id of await this.deps.store.runs.endedAmong(ids)) {
        const entry = this.active.get(id as RunId);
        if (!entry || entry.ended !== undefined) continue;
        this.deps.logger.warn(
          { runId: id },
          'run was ended by another node (this node was declared lost); stopping it here',
        );
        void entry.stop({ cancelledBy: 'stop' });
      }
    };
    const loop = (): void => {
      this.cancelPoll = setTimeout(() => {
        poll()
          .catch((err: unknown) => this.deps.logger.warn({ err }, 'cancel request poll failed'))
          .finally(() => {
            if (this.cancelPoll) loop();
          });
      }, this.deps.cancelPollMs ?? 1_000);
      this.cancelPoll.unref();
    };
    loop();
  }

  /** `host:pid` of this service process. */
  get supervisorId(): string {
    return this.deps.supervisorId;
  }

  /** Whether this process supervises `runId` right now. */
  supervises(runId: string): boolean {
    return this.active.has(runId as RunId);
  }

  /** Number of runs this process is supervising. */
  get activeCount(): number {
    return this.active.size;
  }

  /**
   * Launches `run` (already stored as `starting`) in the background. Never throws: every failure
   * ends the run as failed with an outcome message.
   */
  start(run: RunRow, request: LaunchRequest, timeoutMs: number): void {
    const entry: ActiveRun = {
      runId: run.id as RunId,
      pid: undefined,
      // Until the process exists, a stop is only remembered; execute() honours it at spawn.
      stop: async (why) => {
        entry.stopBeforeSpawn = why;
      },
      done: Promise.resolve(),
    };
    this.active.set(entry.runId, entry);
    const ctx = newRunContext(this.services, run, request, timeoutMs, entry, join(this.deps.runsDir, run.id));
    entry.done = executeRun(ctx)
      .catch((err: unknown) => this.deps.logger.error({ err, runId: run.id }, 'run supervision failed'))
      .finally(() => {
        this.active.delete(entry.runId);
        this.onRunEnded?.();
      });
  }

  /**
   * Cancels a run this process supervises, waits until none of its processes is left, then up to
   * 10 s for its end to reach the database.
   *
   * @returns false when this process does not supervise that run; else what was achieved
   *   ({@link CancelResult}): only `cancelled` means the cancel is recorded.
   */
  async cancel(runId: RunId, by: 'owner_cancel' | 'stop'): Promise<CancelResult | false> {
    const entry = this.active.get(runId);
    if (!entry) return false;
    await entry.stop({ cancelledBy: by });
    let timer: NodeJS.Timeout | undefined;
    const recorded = await Promise.race([
      entry.done.then(() => true),
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), CANCEL_RECORD_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!recorded || entry.ended === undefined) return { kind: 'unrecorded' };
    return entry.ended === 'cancelled' ? { kind: 'cancelled' } : { kind: 'ended', status: entry.ended };
  }

  /**
   * Moves the wall-clock deadline of a run this process supervises by `addMs`, capped at
   * {@link MAX_RUN_WALL_CLOCK_MS} (the "+30 min" button).
   *
   * @returns the new limit in ms; `capped` when it already is at the cap; false when this
   *   process does not supervise the run (or its CLI has not started yet).
   */
  extend(runId: RunId, addMs: number): number | 'capped' | false {
    const extend = this.active.get(runId)?.extend;
    if (!extend) return false;
    return extend(addMs) ?? 'capped';
  }

  /**
   * Adds `text` as a user message to the running turn of a run this process supervises.
   *
   * @returns `added`; `ended` when its last turn had ended (the message reached no turn);
   *   `unsupported` when its CLI takes no message while it runs (or is not spawned yet); false when this process does not
   *   supervise the run.
   */
  async steer(runId: RunId, text: string): Promise<'added' | 'ended' | 'unsupported' | false> {
    const entry = this.active.get(runId);
    if (!entry) return false;
    // Before the spawn there is no input yet: such a run is answered as one that takes none.
    return entry.steer ? entry.steer(text) : 'unsupported';
  }

  /** Resolves once the run's end is recorded (or given up), at once when this process does not supervise it. */
  async ended(runId: RunId): Promise<void> {
    await this.active.get(runId)?.done;
  }

  /** Stops every run (service shutdown); each ends `interrupted` with resume guidance. */
  async shutdown(): Promise<void> {
    if (this.cancelPoll) clearTimeout(this.cancelPoll);
    this.cancelPoll = undefined;
    this.stopping.abort(new Error('the service is stopping'));
    await Promise.all(
      [...this.active.values()].map(async (entry) => {
        await entry.stop({ shutdown: true });
        await entry.done;
      }),
    );
  }

  /** Resolves when no run is being supervised (tests). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await Promise.all([...this.active.values()].map((e) => e.done));
  }

  /**
   * Begins the launch snapshot of a run about to start in `cwd`, before its spawn. The dispatcher
   * calls it from inside the launch transaction once the run holds its worktree
   * (`RunStore.createRun`'s `onLaunchable`): the snapshot's git process then starts while the
   * commit travels, ahead of the CLI's start rather than beside it, and the spawn does not wait
   * for it. In 30-run dispatch benches on the 2-core machine codex's start inside
   * baton was 34 and 43 ms behind a direct start at p50 with the snapshot begun after the spawn,
   * 18 ms with it begun here, at the same update → spawn (30.5 against 31 and 32.5 ms).
   *
   * {@link start} uses it; {@link dropLaunchSnapshot} discards it when the transaction failed, and
   * {@link discardLaunchSnapshot} when the run was queued after all. Begun twice (a transaction
   * run again), the second waits for the first and replaces it. Never throws: a run directory that
   * cannot be made leaves the snapshot to the launch, which reports the error.
   */
  beginLaunchSnapshot(runId: RunId, cwd: string): void {
    this.services.snapshots.begin(runId, cwd);
  }

  /**
   * Discards a snapshot begun by {@link beginLaunchSnapshot} for a run that was not created: the
   * run directory is removed at once, and again once its git has ended, in the background (the
   * launch's own error does not wait for git, which a hostile repository can hold up to its time
   * limit); a directory that cannot be removed is logged.
   *
   * @returns whether a snapshot had been begun (the run directory is then removed here).
   */
  async dropLaunchSnapshot(runId: RunId): Promise<boolean> {
    return this.services.snapshots.drop(runId);
  }

  /**
   * Discards a snapshot begun by {@link beginLaunchSnapshot} for a run that was queued after all:
   * a launch transaction run again (a stale prepared statement) may find the worktree taken on its
   * second try, after its first began the snapshot. The run starts later, after another run may
   * have written in the worktree, so that snapshot must not be its diff's base: its index is
   * removed once its git ended (the run directory stays: it holds the run's attachments), and the
   * run's own snapshot, taken at its start, waits for that.
   */
  discardLaunchSnapshot(runId: RunId): void {
    this.services.snapshots.discard(runId);
  }
}
