/**
 * Launch snapshots: the run's working tree as it was before its CLI could change it, the base of
 * its diff. Begun before the spawn when the dispatcher can (inside the launch transaction), else
 * right after it; discarded for launches that were not created or were queued after all.
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunId } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import { beginSnapshotTree, removeSnapshotIndexes, snapshotTree, SNAPSHOT_FILES, type TreeSnapshot } from '../diff.js';

/**
 * Nice value of the launch snapshot's git processes: they may still run beside the CLI's start,
 * which waits only for their end (its task follows the snapshot), so the CLI gets the CPU first.
 */
const LAUNCH_SNAPSHOT_NICENESS = 10;

/** The launch snapshots of the runs about to start, by run. */
export class LaunchSnapshots {
  /** Launch snapshots begun before the spawn ({@link begin}), by run. */
  private readonly begun = new Map<RunId, Promise<TreeSnapshot | undefined>>();
  /** Launch snapshots discarded for runs that were queued ({@link discard}): done once their index is gone. */
  private readonly discarded = new Map<RunId, Promise<void>>();

  /**
   * @param runsDir `$BATON_HOME/harness/runs`.
   */
  constructor(
    private readonly runsDir: string,
    private readonly logger: Logger,
  ) {}

  /** See `RunSupervisor.beginLaunchSnapshot`. Never throws. */
  begin(runId: RunId, cwd: string): void {
    const runDir = join(this.runsDir, runId);
    try {
      mkdirSync(runDir, { recursive: true, mode: 0o700 });
      chmodSync(runDir, 0o700);
    } catch (err) {
      this.logger.debug(
        { err, runId },
        'no run directory for an early launch snapshot; the launch takes it after the spawn',
      );
      return;
    }
    const prior = this.begun.get(runId) ?? Promise.resolve(undefined);
    this.begun.set(
      runId,
      prior.then(() => this.take({ id: runId, cwd }, runDir)),
    );
  }

  /** See `RunSupervisor.dropLaunchSnapshot`. @returns whether a snapshot had been begun. */
  async drop(runId: RunId): Promise<boolean> {
    const begun = this.begun.get(runId);
    if (!begun) return false;
    this.begun.delete(runId);
    const runDir = join(this.runsDir, runId);
    const remove = (): Promise<void> =>
      rm(runDir, { recursive: true, force: true }).catch((err: unknown) =>
        this.logger.warn({ err, runId }, 'could not remove the run directory of a launch that was not created'),
      );
    // Again once git ended, in the background: its index (written in the directory it found)
    // fails once the directory is gone, so this finds nothing unless git was quicker.
    void begun.then(remove);
    // Now, not once git ended: a service stopped meanwhile (git held up to its time limit by a
    // hostile repository) left the directory of a run that does not exist, attachments and all.
    await remove();
    return true;
  }

  /** See `RunSupervisor.discardLaunchSnapshot`. */
  discard(runId: RunId): void {
    const begun = this.begun.get(runId);
    if (!begun) return;
    this.begun.delete(runId);
    const runDir = join(this.runsDir, runId);
    const gone = begun
      .then((taken) => (taken ? removeSnapshotIndexes(runDir) : undefined))
      .catch((err: unknown) => this.logger.warn({ err, runId }, 'could not remove the snapshot index of a queued run'))
      .finally(() => {
        if (this.discarded.get(runId) === gone) this.discarded.delete(runId);
      });
    this.discarded.set(runId, gone);
  }

  /**
   * Hands a starting run what was begun or discarded for it: the snapshot begun in its launch
   * transaction (no longer kept here), and the discarded one whose index must go first.
   */
  takeFor(runId: RunId): {
    begun: Promise<TreeSnapshot | undefined> | undefined;
    discarded: Promise<void> | undefined;
  } {
    const begun = this.begun.get(runId);
    this.begun.delete(runId);
    return { begun, discarded: this.discarded.get(runId) };
  }

  /**
   * Begins writing the tree of a launch snapshot whose CLI has its task (see `beginSnapshotTree`),
   * at the launch snapshot's nice value: it runs beside the CLI's first model call.
   */
  writeTreeAfterTask(snapshot: TreeSnapshot): void {
    beginSnapshotTree(snapshot, { niceness: LAUNCH_SNAPSHOT_NICENESS });
  }

  /**
   * The launch snapshot of the run's working tree (see diff.ts); undefined outside a git checkout
   * or when git failed (logged: the run goes on without a diff).
   */
  async take(run: { id: string; cwd: string }, runDir: string): Promise<TreeSnapshot | undefined> {
    const started = performance.now();
    try {
      const snapshot = await snapshotTree(run.cwd, join(runDir, SNAPSHOT_FILES.start), {
        niceness: LAUNCH_SNAPSHOT_NICENESS,
      });
      this.logger.debug(
        { runId: run.id, ms: Math.round(performance.now() - started), git: Boolean(snapshot) },
        'working tree snapshot taken',
      );
      return snapshot;
    } catch (err) {
      this.logger.warn({ err, runId: run.id }, 'could not snapshot the working tree; the outcome will carry no diff');
      return undefined;
    }
  }
}
