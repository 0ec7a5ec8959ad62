/**
 * Restart reconciliation: runs left active by a dead service process on this
 * host become `interrupted`, their leftover processes are killed, and their origin is told how to
 * resume. Nothing is relaunched.
 */
import type { Clock } from '../core/clock.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
import type { DeliveryRow } from '../store/schema.js';
import { join } from 'node:path';
import { terminateRun } from './process-tree.js';
import { existingRunCgroup, type CgroupSupport } from './run-cgroup.js';
import { readTerminalRecord } from './terminal-write.js';
import { outcomeTarget } from './run/outcome-target.js';
import type { DescribeOutcome } from './outcome.js';
import type { ReconcileWords } from './ports.js';
import type { Vendor, VendorName } from './vendors/types.js';

/** Dependencies of {@link reconcileOrphanedRuns}. */
export interface ReconcileDeps {
  store: RunStore;
  clock: Clock;
  logger: Logger;
  vendors: ReadonlyMap<VendorName, Vendor>;
  /** This host's name; runs supervised on other hosts are left alone. */
  host: string;
  /** Whether a service pid on this host is alive. */
  isAlive: (pid: number) => boolean;
  /** Whether this process supervises the run (its own runs are skipped). */
  isSupervisedHere: (runId: string) => boolean;
  /** The pass at service start (before any launch), not a periodic one. */
  startup: boolean;
  killGraceMs: number;
  /** Where run cgroups live, to kill what a dead process's runs left in theirs. @default none */
  cgroups?: CgroupSupport;
  /** `$BATON_HOME/harness/runs`: a run that ended before the restart left `terminal.json` there. */
  runsDir: string;
  /** Puts an interrupted run's facts into its outcome message (the wording's). */
  describeOutcome: DescribeOutcome;
  /** The interrupted run's error and the label of its Resume button. */
  words: ReconcileWords;
}

/** @returns the resume-guidance deliveries written, for the caller to attempt. */
export async function reconcileOrphanedRuns(deps: ReconcileDeps): Promise<DeliveryRow[]> {
  const written: DeliveryRow[] = [];
  for (const run of await deps.store.runs.activeRunsSupervisedBy(`${deps.host}:`)) {
    // A run this process supervises is never an orphan. Nor, after start-up, is any run under our
    // own pid: one may be between its row and its spawn. At start-up a run under our pid belongs
    // to an earlier process that had the same pid.
    if (deps.isSupervisedHere(run.id)) continue;
    const pid = Number(run.supervisor.slice(deps.host.length + 1));
    if (pid === process.pid && !deps.startup) continue;
    if (Number.isInteger(pid) && pid !== process.pid && deps.isAlive(pid)) continue;
    const cgroup = deps.cgroups ? existingRunCgroup(deps.cgroups, run.id) : undefined;
    const killed = await terminateRun({
      rootPid: run.pid ?? undefined,
      runId: run.id,
      graceMs: deps.killGraceMs,
      ...(cgroup ? { trackedPids: cgroup.pids } : {}),
    });
    await cgroup?.killAll(deps.killGraceMs);
    // A run whose end its supervisor recorded on disk but could not write to the database (an
    // outage, then a stop or crash) ended as recorded: it is not `interrupted`.
    const recorded = await readTerminalRecord(join(deps.runsDir, run.id), run.id, deps.logger);
    if (recorded) {
      const row = await deps.store.runs.finishRun(
        run.id as RunId,
        recorded.terminal,
        recorded.outcome,
        deps.clock.now(),
      );
      deps.logger.warn(
        { runId: run.id, status: recorded.terminal.status, leftoverPids: killed },
        'run had ended before the restart; its recorded end is written now',
      );
      if (row) written.push(row);
      continue;
    }
    const endedAt = deps.clock.now();
    const vendor = deps.vendors.get(run.vendor);
    const resumeCommand =
      run.vendorSessionId && vendor ? vendor.resumeCommand(run.cwd, run.vendorSessionId) : undefined;
    const body = deps.describeOutcome({
      run,
      status: 'interrupted',
      reason: 'restart',
      endedAt,
      errorMessage: deps.words.interruptedByRestart,
      resumeCommand,
    });
    const row = await deps.store.runs.finishRun(
      run.id as RunId,
      { status: 'interrupted', reason: 'restart', endedAt },
      {
        runId: run.id as RunId,
        kind: 'outcome',
        target: outcomeTarget(run),
        body,
        format: 'markdown',
        ...(run.vendorSessionId
          ? { buttons: [{ label: deps.words.buttons.resume, action: 'resume', arg: run.id }] }
          : {}),
      },
      endedAt,
    );
    deps.logger.warn({ runId: run.id, leftoverPids: killed }, 'run interrupted by a restart');
    if (row) written.push(row);
  }
  return written;
}
