/**
 * Runs a vendor CLI in the background and turns its end into a terminal run state plus an outcome
 * message, written together.
 */
import { worktreeChanges } from './worktrees.js';
import { chmodSync, createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { chmod, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { formatDurationMs, type Clock } from '../core/clock.js';
import { BatonError, isBatonError } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import type { StatusEditor } from '../delivery/status-editor.js';
import type { StatusFacts } from '../wording/runs.js';
import type { RunStore } from '../store/runs-repo.js';
import type { ButtonJson } from '../core/buttons.js';
import type { DeliveryRow, RunRow } from '../store/schema.js';
import { RunStream } from './run-stream.js';
import { noTracer, type Tracer } from './traces.js';
import { startWatchdog } from './watchdog.js';
import { classifyExit, type DescribeOutcome, type ExitFacts, type OutcomeDiff } from './outcome.js';
import { diffSinceSnapshot, removeSnapshotIndexes, snapshotTree, SNAPSHOT_FILES, type TreeSnapshot } from './diff.js';
import type { DocumentJson } from '../store/schema.js';
import { APPROVAL_SERVER_NAME } from './approval-names.js';
import { terminateRun } from './process-tree.js';
import { trackRunProcesses, type CgroupSupport, type RunProcesses } from './run-cgroup.js';
import { buildChildEnv, type BaseEnv } from './spawn-env.js';
import { writeProjectInstructions } from './project-instructions.js';
import { branchExists, worktreeGoneError, worktreeIntact } from './worktree-restore.js';
import {
  persistTerminal,
  writeTerminalRecord,
  type TerminalRecord,
  type TerminalWritePolicy,
} from './terminal-write.js';
import type { LaunchRequest, StreamFacts, Vendor, VendorHomes, VendorName } from './vendors/types.js';
import { codexLoginState } from '../doctor/login.js';
import type { Platform } from '../channels/types.js';
import { runTag } from '../wording/run-tag.js';

/** A vendor CLI found on PATH at start. */
export interface InstalledVendor {
  vendor: Vendor;
  /** Absolute path of the executable, resolved once at start. */
  binaryPath: string;
  version: string;
}

/** Limits of one run. */
export interface RunLimits {
  /** Longest vendor event line, in bytes. */
  maxEventBytes: number;
  /** Malformed lines tolerated before the run is killed as `failed/protocol`. */
  maxFramingErrors: number;
  /** Wait between SIGINT and SIGKILL when stopping a run, in ms. */
  killGraceMs: number;
  /** Cap of `events.jsonl`, in bytes; output past 4× this kills the run. */
  maxRunArtifactBytes: number;
  /** Advisory notice when no vendor event arrived after this many ms. */
  firstEventMs: number;
  /** Advisory notice after this many ms of silence. */
  inactivityMs: number;
  /**
   * How long the CLI may take to exit after its terminal event, in ms; then it is stopped and the
   * run judged from that event. Any later event restarts the wait: claude can
   * start another turn after a `result`.
   */
  finishGraceMs: number;
  /**
   * How long stdout and stderr are still read after the CLI has exited, in ms; a descendant that
   * inherited them may hold them open, and is stopped after this.
   */
  exitDrainMs: number;
  /** Largest `hr_….patch` sent with an outcome, in bytes; over it only the stat is sent. */
  maxPatchBytes: number;
}

/** Dependencies of the {@link RunSupervisor}. */
export interface SupervisorDeps {
  store: RunStore;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  homes: VendorHomes;
  baseEnv: BaseEnv;
  /** `$BATON_HOME/harness/runs`. */
  runsDir: string;
  limits: RunLimits;
  /** `host:pid` of this service process, stored on every run it supervises. */
  supervisorId: string;
  /** How often to look for cancel requests from other processes, in ms. @default 1_000 */
  cancelPollMs?: number;
  /** Puts a finished run's facts into its outcome message (the chat layer's words). */
  describeOutcome: DescribeOutcome;
  /** Lifecycle traces. @default none */
  tracer?: Tracer;
  /** Where run cgroups are made (`detectCgroupSupport()` at start). @default none: runs are followed by their process tree */
  cgroups?: CgroupSupport;
  /**
   * How to start the per-run permission-prompt server of a run that asks for approvals (issue
   * #14): the command, its arguments and environment, written to the run's 0600 `mcp.json`.
   * @default none: such a run fails at launch with `approvals_unavailable`
   */
  approvalServer?: (runId: string, token: string) => { command: string; args: string[]; env: Record<string, string> };
  /** Told once a run's end is in the database (closes its open tool approvals). @default none */
  onRunEnded?: (runId: RunId) => Promise<void>;
  /** Backoff of the run-end write while the database is away. @default TERMINAL_WRITE_POLICY */
  terminalWrite?: TerminalWritePolicy;
  /**
   * The live status: the run's `started` message edited in place, and the
   * words of its status lines. @default none: no edits, and `progress` runs post milestone notices
   */
  status?: { editor: StatusEditor; describe: (facts: StatusFacts) => string };
}

interface ActiveRun {
  runId: RunId;
  pid: number | undefined;
  stopBeforeSpawn?: StopReason;
  stop: (why: StopReason) => Promise<void>;
  done: Promise<void>;
  /** Set once the run's end is in the database: its status, or `already_ended` when it was not active any more. */
  ended?: RunRow['status'] | 'already_ended';
  /** Moves the wall-clock deadline (set once the CLI runs): @returns the new limit in ms, or undefined when already at the cap. */
  extend?: (addMs: number) => number | undefined;
}

/** Longest wall clock of a run, also after "+30 min" presses, in ms (240 minutes). */
export const MAX_RUN_WALL_CLOCK_MS = 240 * 60_000;

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

/** Why the supervisor stops a run. */
type StopReason = Partial<
  Pick<ExitFacts, 'cancelledBy' | 'killedFor' | 'timedOut' | 'shutdown' | 'stoppedAfterTerminal' | 'startUnrecorded'>
>;

const STDERR_TAIL_BYTES = 4096;
/** Write buffer of `events.jsonl`, in bytes. */
const SPOOL_BUFFER_BYTES = 1024 * 1024;
/** A run whose total output passes this many times the spool cap is killed. */
const OUTPUT_LIMIT_FACTOR = 4;
/** At most one progress notice per this many ms. */
const PROGRESS_INTERVAL_MS = 60_000;
/** The live status is refreshed at least this often while a run is silent (its elapsed time), in ms. */
const STATUS_REFRESH_MS = 30_000;
/**
 * Nice value of the launch snapshot's git processes: they may still run beside the CLI's start,
 * which waits only for their end (its task follows the snapshot), so the CLI gets the CPU first.
 *
 */
const LAUNCH_SNAPSHOT_NICENESS = 10;

/** Starts, watches, cancels and finishes runs. */
export class RunSupervisor {
  /** Launch snapshots begun before the spawn ({@link beginLaunchSnapshot}), by run. */
  private readonly launchSnapshots = new Map<RunId, Promise<TreeSnapshot | undefined>>();
  /** Launch snapshots discarded for runs that were queued ({@link discardLaunchSnapshot}): done once their index is gone. */
  private readonly discardedSnapshots = new Map<RunId, Promise<void>>();
  private readonly active = new Map<RunId, ActiveRun>();
  private cancelPoll: NodeJS.Timeout | undefined;
  /** Aborted at shutdown: pending run-end writes stop retrying and stay in `terminal.json`. */
  private readonly stopping = new AbortController();

  private readonly tracer: Tracer;

  /**
   * Called after each run this process supervised has ended (its end recorded or given up): a
   * slot is free, so queued runs may start. Set by the composition root.
   */
  onRunEnded: (() => void) | undefined;

  constructor(private readonly deps: SupervisorDeps) {
    this.tracer = deps.tracer ?? noTracer;
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
    entry.done = this.execute(run, request, timeoutMs, entry)
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

  private async execute(run: RunRow, request: LaunchRequest, timeoutMs: number, entry: ActiveRun): Promise<void> {
    const { deps } = this;
    // Where the launch spends its time before the spawn, in ms since here, logged with 'run started'.
    const launchStartMs = performance.now();
    const spawnSpans: Record<string, number> = {};
    const mark = (name: string): void =>
      void (spawnSpans[name] = Math.round((performance.now() - launchStartMs) * 10) / 10);
    const runId = run.id as RunId;
    const installed = deps.vendors.get(run.vendor);
    const runDir = join(deps.runsDir, runId);
    const reducer = installed?.vendor.newReducer(
      request.sessionUsageBefore ? { sessionUsageBefore: request.sessionUsageBefore } : undefined,
    );
    const exit: ExitFacts = {
      exitCode: null,
      signal: null,
      timedOut: false,
      ...(request.resumeSessionId ? { resumeSessionId: request.resumeSessionId } : {}),
      ...(run.options.maxTokens !== undefined ? { maxTokens: run.options.maxTokens } : {}),
    };
    let stderrTail = Buffer.alloc(0);
    let events: WriteStream | undefined;
    let stream: RunStream | undefined;
    let stopWatchdog = (): void => {};
    // The launch snapshot; the CLI gets its task once it resolved. Begun inside the launch
    // transaction ({@link beginLaunchSnapshot}), else right after the spawn.
    let snapshotTaken: Promise<TreeSnapshot | undefined> | undefined;
    const begun = this.launchSnapshots.get(runId);
    this.launchSnapshots.delete(runId);
    // A snapshot begun for this run and discarded when it was queued: its git and index go first.
    const discarded = this.discardedSnapshots.get(runId);

    try {
      if (!installed) {
        throw new BatonError(
          'vendor_missing',
          `The ${run.vendor} CLI was not found on PATH when baton started. Install it, then restart baton.`,
        );
      }
      // Synchronous on purpose: two metadata calls in baton's own home take microseconds, and the
      // thread-pool round trips of the async ones cost the launch 1.8 ms p50, 5.2 ms p95 on the
      // 2-core machine (dispatch bench spans).
      mkdirSync(runDir, { recursive: true, mode: 0o700 });
      chmodSync(runDir, 0o700);
      mark('run_dir');
      checkTaskLength(installed.vendor, request.prompt);
      // The last word on where a run happens, whichever path (a queue, another node) led here:
      // a worktree that is gone must not become an empty or foreign directory to run in.
      if (run.branch && run.sourceRoot && !(await worktreeIntact(run.worktreeRoot))) {
        throw worktreeGoneError(
          runId,
          { worktreeRoot: run.worktreeRoot, branch: run.branch, sourceRoot: run.sourceRoot },
          await branchExists(run.sourceRoot, run.branch),
        );
      }
      const env = buildChildEnv(installed.vendor, deps.baseEnv, deps.homes, runId);
      const launch: LaunchRequest = { ...request };
      if (request.approvalToken !== undefined) {
        if (!installed.vendor.supportsApprovals || !deps.approvalServer) {
          throw new BatonError(
            'approvals_unavailable',
            `Tool approvals are not available for ${run.vendor} runs here. Launch without approve (and without mode:default).`,
          );
        }
        // Only baton's server, from this file (0600, in the 0700 run directory): --strict-mcp-config
        // keeps every other MCP config out, and the token lets the server ask about this run only.
        const mcpConfig = join(runDir, 'mcp.json');
        await writePrivate(
          mcpConfig,
          JSON.stringify({
            mcpServers: {
              [APPROVAL_SERVER_NAME]: { type: 'stdio', ...deps.approvalServer(runId, request.approvalToken) },
            },
          }),
        );
        launch.approvalMcpConfig = mcpConfig;
      }
      if (installed.vendor.instructionFiles) {
        const instructions = await writeProjectInstructions(
          run.cwd,
          installed.vendor.instructionFiles,
          join(runDir, 'instructions.md'),
        );
        if (instructions.file) launch.instructionsFile = instructions.file;
        if (instructions.skipped.length > 0) exit.instructionsNote = instructions.skipped.join('\n');
        mark('instructions');
      }
      const argv = installed.vendor.buildArgv(launch, { cwd: run.cwd });
      const task = await installed.vendor.stdinPayload(launch);
      mark('task_payload');
      if (entry.stopBeforeSpawn) {
        Object.assign(exit, entry.stopBeforeSpawn);
        throw new StoppedBeforeSpawn();
      }
      // A 1 MiB buffer: with the 16 KiB default the child's output was paused after most chunks.
      events = createWriteStream(join(runDir, 'events.jsonl'), {
        mode: 0o600,
        flags: 'a',
        highWaterMark: SPOOL_BUFFER_BYTES,
      });
      const spool = events;
      // The child's stdout once spawned: a spawn that throws leaves no child for the handler below.
      let childOutput: Readable | undefined;
      // A failing spool (disk full) must neither stop the run nor leave its output paused.
      spool.once('error', (err) => {
        deps.logger.warn({ err, runId }, 'events.jsonl write failed; spooling stops, the run continues');
        stream?.detachSpool();
        childOutput?.resume();
      });
      spool.on('error', () => {}); // later errors of the same broken file: already reported once

      // node:child_process, not execa: execa's own work around a spawn (option handling, its
      // stream and promise plumbing) cost the launch ~3-5 ms of CPU at baton's heap on the 2-core
      // machine, part of it before the fork. Exactly `env` (nothing inherited); raw
      // Buffers; the child is never killed by this process's exit.
      const child = spawn(installed.binaryPath, argv, {
        cwd: run.cwd,
        env,
        // The task goes on stdin once the launch snapshot is taken (below), then stdin is closed:
        // an open stdin pipe hangs codex forever.
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // own session and process group, so a group signal reaches its tools
      });
      childOutput = child.stdout ?? undefined;
      // How the child ended: its exit code or signal once its pipes are closed, or the error that
      // kept it from starting (ENOENT, EACCES: 'error' with no pid, then no exit).
      const ended = new Promise<{
        exitCode: number | null;
        signal: NodeJS.Signals | null;
        spawnError?: NodeJS.ErrnoException;
      }>((resolve) => {
        child.on('error', (err: NodeJS.ErrnoException) => {
          if (child.pid === undefined) resolve({ exitCode: null, signal: null, spawnError: err });
          else deps.logger.warn({ err, runId }, 'the CLI process reported an error');
        });
        child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
      });
      // From here to the readers below there is no await: the pipes stay paused until read, and a
      // CLI that prints its whole stream at once must not wait on a full pipe (under execa, which
      // resumed them, such a stream was lost, and its session id and stderr with it).
      // Once the CLI has exited on its own, or is being stopped after its terminal event, the run
      // has finished: a cancel or shutdown arriving then must not relabel its outcome.
      let finishedOnItsOwn = false;
      const exited = new Promise<void>((resolve) =>
        child.once('exit', () => {
          if (!stopping) finishedOnItsOwn = true;
          resolve();
        }),
      );
      entry.pid = child.pid;
      mark('spawned');
      // Stamped at the spawn itself, before the cgroup move below (which can take ms): the
      // dispatch-overhead bench times update → spawn by this trace.
      if (child.pid !== undefined)
        this.tracer.trace('run_start', {
          runId,
          vendor: run.vendor,
          cwd: run.cwd,
          pid: child.pid,
          resume: Boolean(request.resumeSessionId),
        });
      // The launch snapshot only has to be complete before the CLI can change anything, and
      // neither CLI acts (nor calls its model) before it has its task on stdin (measured, see
      // each vendor's stdinPayload). Begun in the launch transaction when the dispatcher could,
      // else now, while the CLI starts (a queued run started later, a resumed launch). A CLI
      // that could not be spawned changes nothing: no snapshot, no task.
      snapshotTaken =
        child.pid === undefined
          ? Promise.resolve(undefined)
          : (begun ?? (discarded ? discarded.then(() => this.snapshot(run, runDir)) : this.snapshot(run, runDir)));
      // The prompt's copy in the run directory is for the owner only (the CLI gets it on stdin):
      // written after the spawn, off the launch path.
      const promptWritten = writePrivate(join(runDir, 'prompt.md'), request.prompt).catch((err: unknown) =>
        deps.logger.warn({ err, runId }, 'could not write prompt.md'),
      );
      const processes: RunProcesses | undefined =
        child.pid === undefined
          ? undefined
          : trackRunProcesses(deps.cgroups ?? { unavailable: 'not configured' }, runId, child.pid);
      mark('tracked');
      if (processes?.fallbackReason)
        deps.logger.warn(
          { runId, why: processes.fallbackReason },
          'no cgroup for this run; following its process tree instead',
        );
      // A CLI that exits before reading its task makes the write fail (EPIPE); its exit says why.
      child.stdin?.on('error', (err) => deps.logger.warn({ err, runId }, 'could not write the task to the CLI'));
      // 'pending' until the snapshot resolved; 'withheld' when the run was stopped first.
      let taskState: 'pending' | 'sent' | 'withheld' = 'pending';
      const taskSent = snapshotTaken.then(() => {
        if (taskState !== 'pending' || child.pid === undefined) return;
        taskState = 'sent';
        child.stdin?.end(task);
        mark('task_sent');
        deps.logger.debug({ runId, spansMs: spawnSpans }, 'task sent to the CLI');
      });
      let stopping: Promise<void> | undefined;
      entry.stop = (why) => {
        // A run stopped before its task was sent never gets it; its stdin is closed.
        if (taskState === 'pending') {
          taskState = 'withheld';
          child.stdin?.destroy();
        }
        // Leftover processes are stopped either way; only a run still working is relabelled.
        if (!finishedOnItsOwn && !exit.stoppedAfterTerminal) Object.assign(exit, why);
        stopping ??= terminateRun({
          rootPid: child.pid,
          runId,
          graceMs: deps.limits.killGraceMs,
          ...(processes ? { trackedPids: processes.pids } : {}),
        }).then(() => undefined);
        return stopping;
      };
      let limitMs = timeoutMs;
      const spawnedAtMs = deps.clock.nowMs();
      let timer = setTimeout(() => void entry.stop({ timedOut: true }), limitMs);
      timer.unref();
      entry.extend = (addMs) => {
        const next = Math.min(limitMs + addMs, Math.max(limitMs, MAX_RUN_WALL_CLOCK_MS));
        if (next === limitMs) return undefined;
        limitMs = next;
        clearTimeout(timer);
        timer = setTimeout(
          () => void entry.stop({ timedOut: true }),
          Math.max(0, spawnedAtMs + limitMs - deps.clock.nowMs()),
        );
        timer.unref();
        return limitMs;
      };
      // After the terminal event the CLI gets a grace to exit; any later event restarts it.
      let finishTimer: NodeJS.Timeout | undefined;
      const armFinishGrace = (): void => {
        if (finishTimer) clearTimeout(finishTimer);
        finishTimer = setTimeout(() => void entry.stop({ stoppedAfterTerminal: true }), deps.limits.finishGraceMs);
        finishTimer.unref();
      };

      const watchdog = startWatchdog({
        firstEventMs: deps.limits.firstEventMs,
        inactivityMs: deps.limits.inactivityMs,
        onNoFirstEvent: () =>
          this.notify(
            run,
            `No event from ${run.vendor} after ${formatDurationMs(deps.limits.firstEventMs)}: often a login or config problem. The run continues; ${howToStop(run.origin.platform, runId)}.`,
            advisoryButtons(runId),
          ),
        onSilence: () =>
          this.notify(
            run,
            `No output from ${run.vendor} for ${formatDurationMs(deps.limits.inactivityMs)}. The run continues; ${howToStop(run.origin.platform, runId)}.`,
            advisoryButtons(runId),
          ),
      });
      const runReducer = reducer!;
      // Where the channel can edit, the started message is the run's live status, and `progress`
      // adds detail to it; elsewhere (`baton ask`) `progress` posts milestone notices.
      const status = deps.status?.editor.enabledFor(run.origin.platform) ? deps.status : undefined;
      const renderStatus = (): string =>
        status!.describe({
          status: 'running',
          elapsedMs: deps.clock.nowMs() - run.createdAt.getTime(),
          live: runReducer.facts().live,
          detail: run.options.progress,
        });
      const refreshStatus = status
        ? setInterval(() => status.editor.update(run, renderStatus), STATUS_REFRESH_MS)
        : undefined;
      refreshStatus?.unref();
      const progress = run.options.progress && !status ? this.progressReporter(run, installed.vendor) : undefined;
      stopWatchdog = () => {
        watchdog.stop();
        progress?.stop();
        if (refreshStatus) clearInterval(refreshStatus);
        if (finishTimer) clearTimeout(finishTimer);
      };
      let retryNoticed = false;
      // A 401 will not pass by retrying (codex retries it with growing pauses): stop at the first.
      let authFailed = false;
      const stopIfRefused = (source: { event: unknown } | { stderr: string }): boolean => {
        if (authFailed) return true;
        const words = installed.vendor.describeAuthFailure?.(source);
        if (words === undefined) return false;
        authFailed = true;
        const home = run.vendor === 'codex' ? deps.homes.codexHome : deps.homes.claudeConfigDir;
        const fix = installed.vendor.loginFix?.(home) ?? `Log ${run.vendor} in for ${home}, then send the task again.`;
        deps.logger.warn(
          { runId, vendor: run.vendor },
          'the CLI is not logged in or its credentials were refused; stopping the run',
        );
        exit.authFailure = { words, fix };
        void entry.stop({});
        return true;
      };
      stream = new RunStream(
        {
          maxEventBytes: deps.limits.maxEventBytes,
          // An answer can be longer than one event may be in memory: it goes to disk, up to the
          // run's artifact cap, and is read back once.
          spill: { dir: runDir, capBytes: deps.limits.maxRunArtifactBytes },
          maxFramingErrors: deps.limits.maxFramingErrors,
          maxSpoolBytes: deps.limits.maxRunArtifactBytes,
          maxOutputBytes: deps.limits.maxRunArtifactBytes * OUTPUT_LIMIT_FACTOR,
        },
        runReducer,
        spool,
        {
          onEvent: (event) => {
            watchdog.event();
            if (event === undefined) {
              // Spooled unparsed (a kind nothing here reads): activity only.
              if (finishTimer) armFinishGrace();
              return;
            }
            progress?.onEvent(event);
            status?.editor.update(run, renderStatus);
            const refused = stopIfRefused({ event });
            const retry = retryNoticed || refused ? undefined : installed.vendor.describeRetry?.(event);
            if (retry) {
              retryNoticed = true;
              const words = `${run.vendor} is retrying: ${retry.split('\n')[0]!.slice(0, 300)}. The run continues; ${howToStop(run.origin.platform, runId)}.`;
              // A codex with no login in the CODEX_HOME runs use (doctor's file check) retries in
              // vain once the network is back: say so with the retry.
              void this.loginHint(run.vendor)
                .catch(() => '')
                .then((hint) => this.notify(run, `${words}${hint}`));
            }
            const facts = runReducer.facts();
            // The token cap: checked whenever the CLI reports usage (codex at
            // turn.completed, claude at each result); classifyExit names the reason.
            const { maxTokens } = run.options;
            if (
              maxTokens !== undefined &&
              facts.usage &&
              facts.usage.inputTokens + facts.usage.outputTokens > maxTokens
            )
              void entry.stop({});
            if (finishTimer || facts.terminal) armFinishGrace();
          },
          // Progress milestones come from events the reducer skips (codex item.started, …).
          ...(progress ? { reads: () => true } : {}),
          onSession: (sessionId) =>
            void deps.store.runs
              .setVendorSession(runId, sessionId)
              .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not store session id')),
          onDroppedLine: (drop) => {
            deps.logger.warn(
              { runId, bytes: drop.bytes, path: drop.path },
              'an event line passed max_run_artifact_mb and was dropped',
            );
            const note = `An event of ${drop.bytes.toLocaleString('en-US')} bytes was longer than max_run_artifact_mb and was left out; its first ${deps.limits.maxRunArtifactBytes.toLocaleString('en-US')} bytes are in ${drop.path}.`;
            exit.streamNote = exit.streamNote ? `${exit.streamNote}\n${note}` : note;
          },
          onTruncated: () => {
            deps.logger.warn(
              { runId, capBytes: deps.limits.maxRunArtifactBytes },
              'events.jsonl reached its cap; spooling stopped, the run continues',
            );
            void deps.store.runs
              .markArtifactTruncated(runId)
              .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not flag artifact_truncated'));
          },
          onViolation: (reason) => void entry.stop({ killedFor: reason }),
        },
      );
      const runStream = stream;
      child.stdout?.on('data', (chunk: Buffer) => {
        if (!runStream.push(chunk) && !spool.errored && !child.stdout?.isPaused()) {
          child.stdout?.pause();
          spool.once('drain', () => child.stdout?.resume());
        }
      });
      child.stderr?.on('data', (chunk: Buffer) => {
        stopIfRefused({ stderr: chunk.toString('utf8') });
        stderrTail = Buffer.concat([stderrTail, chunk]);
        if (stderrTail.length > STDERR_TAIL_BYTES) stderrTail = stderrTail.subarray(-STDERR_TAIL_BYTES);
      });
      // Every byte the child printed is read before its outcome is judged: the exit can be
      // observed before the last 'data' events of its pipes are delivered.
      const drained = Promise.all(
        [child.stdout, child.stderr].map((pipe) =>
          pipe
            ? finished(pipe).catch((err: unknown) =>
                deps.logger.warn({ err, runId }, 'reading the child output failed'),
              )
            : undefined,
        ),
      );

      if (child.pid !== undefined) {
        try {
          await deps.store.runs.markRunning(runId, child.pid, deps.clock.now());
          deps.logger.info(
            { runId, pid: child.pid, vendor: run.vendor, cwd: run.cwd, spansMs: spawnSpans },
            'run started',
          );
        } catch (err) {
          // The CLI exists but its row still says `starting` with no pid: nothing else could ever
          // stop it (the reconciler has no pid to signal), and it would go on changing the
          // checkout of a run recorded as not running. It is stopped like a /stop, with its
          // grace, and the run ends on that; the end goes through terminal.json as any other.
          const shutdown = this.stopping.signal.aborted;
          deps.logger.warn(
            { err, runId, pid: child.pid },
            shutdown ? 'run start interrupted by shutdown' : 'could not record the run as running; stopping its CLI',
          );
          void entry.stop(shutdown ? { shutdown: true } : { startUnrecorded: true });
        }
      }

      // A CLI that has exited is judged once its pipes are drained, or after a short drain when a
      // descendant still holds them: the descendants are stopped and the pipes closed.
      const heldOpen = await Promise.race([
        drained.then(() => false),
        exited.then(() =>
          Promise.race([
            drained.then(() => false),
            delay(deps.limits.exitDrainMs, undefined, { ref: false }).then(() => true),
          ]),
        ),
      ]);
      if (heldOpen) {
        deps.logger.warn(
          { runId, drainMs: deps.limits.exitDrainMs },
          "the CLI exited but a descendant still holds its output; stopping the run's leftover processes",
        );
        child.stdout?.destroy();
        child.stderr?.destroy();
        // No grace: the CLI is gone, so no signal would ask anyone to stop, and waiting the kill
        // grace for the leftovers only pushed the run's end that far past the drain.
        await terminateRun({
          rootPid: undefined,
          runId,
          graceMs: 0,
          ...(processes ? { trackedPids: processes.pids } : {}),
        });
      }
      const result = await ended;
      await promptWritten;
      await taskSent;
      clearTimeout(timer);
      stream.end();
      if (stopping) await stopping;
      // Whatever the run started and left behind (a server, a `setsid` tool) ends with the run.
      const survivors = (await processes?.killAll(deps.limits.killGraceMs)) ?? [];
      exit.processNote = processNote(processes, survivors, Boolean(stopping));
      if (result.spawnError) {
        // ENOENT, EACCES: the CLI never ran. (E2BIG and the like throw from spawn: the catch below.)
        const detail = `${result.spawnError.code ?? ''} ${result.spawnError.message}`.trim();
        exit.spawnFailure = { reason: 'spawn_failed', message: `Could not start ${installed.binaryPath}: ${detail}` };
      } else {
        exit.exitCode = result.exitCode;
        exit.signal = result.signal;
      }
    } catch (err) {
      if (this.stopping.signal.aborted && !(err instanceof StoppedBeforeSpawn)) {
        // The process stopped while the run started (its database may be closing under it): the
        // run was interrupted, which is what it says, not a spawn failure worded by a query.
        exit.shutdown = true;
        deps.logger.warn({ err, runId }, 'run start interrupted by shutdown');
      } else if (!(err instanceof StoppedBeforeSpawn)) {
        const known = (['user_unresolved', 'vendor_missing', 'task_too_long'] as const).find((code) =>
          isBatonError(err, code),
        );
        exit.spawnFailure =
          known && err instanceof Error
            ? { reason: known, message: err.message }
            : {
                reason: 'spawn_failed',
                message: `Could not start the run: ${err instanceof Error ? err.message : String(err)}`,
              };
        deps.logger.warn({ err, runId }, 'run could not start');
      }
    } finally {
      stopWatchdog();
      await closeStream(events);
    }

    const facts = reducer?.facts() ?? { notices: [], eventCount: 0 };
    if (facts.usageInvalid !== undefined)
      deps.logger.warn(
        { runId, vendor: run.vendor, why: facts.usageInvalid },
        'the CLI reported usage figures that cannot be counted; the run’s usage is recorded as unknown',
      );
    exit.stderrTail = stderrTail.toString('utf8');
    // A snapshot begun for a CLI that was never spawned (stopped first, or the spawn threw): its
    // index goes once its git ended, in the background: the failure is not held for a git that a
    // huge or hostile repository keeps running up to its time limit.
    if (begun && snapshotTaken !== begun) {
      void begun
        .then((taken) => (taken ? removeSnapshotIndexes(runDir) : undefined))
        .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not remove the snapshot index'));
    }
    // Never rejects (a failed snapshot is logged and undefined).
    const snapshot = await snapshotTaken;
    // A CLI that never started changed nothing: no diff, and its snapshot index goes.
    const diffFrom = exit.spawnFailure ? undefined : snapshot;
    if (snapshot && !diffFrom) {
      await removeSnapshotIndexes(runDir).catch((err: unknown) =>
        deps.logger.warn({ err, runId }, 'could not remove the snapshot index'),
      );
    }
    await this.finish(run, installed, facts, exit, stderrTail.toString('utf8'), runDir, entry, diffFrom);
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
    const runDir = join(this.deps.runsDir, runId);
    try {
      mkdirSync(runDir, { recursive: true, mode: 0o700 });
      chmodSync(runDir, 0o700);
    } catch (err) {
      this.deps.logger.debug(
        { err, runId },
        'no run directory for an early launch snapshot; the launch takes it after the spawn',
      );
      return;
    }
    const prior = this.launchSnapshots.get(runId) ?? Promise.resolve(undefined);
    this.launchSnapshots.set(
      runId,
      prior.then(() => this.snapshot({ id: runId, cwd }, runDir)),
    );
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
    const begun = this.launchSnapshots.get(runId);
    if (!begun) return false;
    this.launchSnapshots.delete(runId);
    const runDir = join(this.deps.runsDir, runId);
    const remove = (): Promise<void> =>
      rm(runDir, { recursive: true, force: true }).catch((err: unknown) =>
        this.deps.logger.warn({ err, runId }, 'could not remove the run directory of a launch that was not created'),
      );
    // Again once git ended, in the background: its index (written in the directory it found)
    // fails once the directory is gone, so this finds nothing unless git was quicker.
    void begun.then(remove);
    // Now, not once git ended: a service stopped meanwhile (git held up to its time limit by a
    // hostile repository) left the directory of a run that does not exist, attachments and all.
    await remove();
    return true;
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
    const begun = this.launchSnapshots.get(runId);
    if (!begun) return;
    this.launchSnapshots.delete(runId);
    const runDir = join(this.deps.runsDir, runId);
    const gone = begun
      .then((taken) => (taken ? removeSnapshotIndexes(runDir) : undefined))
      .catch((err: unknown) =>
        this.deps.logger.warn({ err, runId }, 'could not remove the snapshot index of a queued run'),
      )
      .finally(() => {
        if (this.discardedSnapshots.get(runId) === gone) this.discardedSnapshots.delete(runId);
      });
    this.discardedSnapshots.set(runId, gone);
  }

  /**
   * The launch snapshot of the run's working tree (see diff.ts); undefined outside a git checkout
   * or when git failed (logged: the run goes on without a diff).
   */
  private async snapshot(run: Pick<RunRow, 'id' | 'cwd'>, runDir: string): Promise<TreeSnapshot | undefined> {
    const started = performance.now();
    try {
      const snapshot = await snapshotTree(run.cwd, join(runDir, SNAPSHOT_FILES.start), {
        niceness: LAUNCH_SNAPSHOT_NICENESS,
      });
      this.deps.logger.debug(
        { runId: run.id, ms: Math.round(performance.now() - started), git: Boolean(snapshot) },
        'working tree snapshot taken',
      );
      return snapshot;
    } catch (err) {
      this.deps.logger.warn(
        { err, runId: run.id },
        'could not snapshot the working tree; the outcome will carry no diff',
      );
      return undefined;
    }
  }

  /** The run's change since `snapshot`, with its patch written to `<run id>.patch`; undefined when none. */
  private async runDiff(
    run: RunRow,
    runDir: string,
    snapshot: TreeSnapshot,
  ): Promise<{ facts: OutcomeDiff; patchPath?: string } | undefined> {
    try {
      const filename = `${run.id}.patch`;
      const diff = await diffSinceSnapshot(
        snapshot,
        join(runDir, SNAPSHOT_FILES.end),
        join(runDir, filename),
        this.deps.limits.maxPatchBytes,
        this.deps.logger,
      );
      if (!diff) return undefined;
      return {
        facts: {
          stat: diff.stat,
          ...(diff.patchPath ? { patchFilename: filename } : { patchMissing: diff.patchMissing }),
          ...(diff.leftOut ? { leftOut: diff.leftOut, includeCommand: `baton patch ${run.id} --include-ignored` } : {}),
        },
        ...(diff.patchPath ? { patchPath: diff.patchPath } : {}),
      };
    } catch (err) {
      this.deps.logger.warn({ err, runId: run.id }, 'could not diff the working tree; the outcome carries no diff');
      return undefined;
    } finally {
      await removeSnapshotIndexes(runDir).catch((err: unknown) =>
        this.deps.logger.warn({ err, runId: run.id }, 'could not remove the snapshot indexes'),
      );
    }
  }

  private async finish(
    run: RunRow,
    installed: InstalledVendor | undefined,
    facts: StreamFacts,
    exit: ExitFacts,
    stderr: string,
    runDir: string,
    entry?: ActiveRun,
    snapshot?: TreeSnapshot,
  ): Promise<void> {
    const { deps } = this;
    const runId = run.id as RunId;
    // The CLI has exited: a cancel that arrives while the end is written (which can take as long
    // as a database outage) must not signal a process group whose id may have been reused.
    if (entry) entry.stop = async () => {};
    const classified = classifyExit(facts, exit);
    const endedAt = deps.clock.now();
    const sessionId = facts.sessionId;
    const resumeCommand = sessionId && installed ? installed.vendor.resumeCommand(run.cwd, sessionId) : undefined;
    const diagnostics = diagnosticsTail(facts.notices, stderr, classified.errorMessage);
    const denials = facts.denials ?? [];
    const diff = snapshot ? await this.runDiff(run, runDir, snapshot) : undefined;
    const worktree = run.branch
      ? {
          branch: run.branch,
          changes: await worktreeChanges(run.worktreeRoot).catch((err: unknown) => {
            deps.logger.warn({ err, runId }, 'could not measure the changes in the run worktree');
            return undefined;
          }),
        }
      : undefined;
    const body = deps.describeOutcome({
      worktree,
      run,
      status: classified.status,
      reason: classified.reason,
      endedAt,
      finalMessage: facts.finalMessage ?? null,
      errorMessage: classified.errorMessage,
      usage: facts.usage ?? null,
      denials,
      note: classified.note,
      diagnostics,
      resumeCommand,
      processNote: exit.processNote,
      instructionsNote: exit.instructionsNote,
      streamNote: exit.streamNote,
      diff: diff?.facts,
    });
    // The whole outcome as result.md: the outbox sends it instead of the later parts when the
    // outcome would take more than LONG_BODY_PARTS messages on the platform.
    const documents: DocumentJson[] = [];
    const resultPath = join(runDir, 'result.md');
    await writePrivate(resultPath, body).then(
      () =>
        documents.push({
          path: resultPath,
          filename: 'result.md',
          use: 'long_body',
          caption: `${runTag(runId)} The whole answer: result.md`,
        }),
      (err: unknown) =>
        deps.logger.warn({ err, runId }, 'could not write result.md; a long outcome goes as text parts'),
    );
    if (diff?.patchPath) {
      documents.push({
        path: diff.patchPath,
        filename: `${runId}.patch`,
        use: 'always',
        caption: `${runTag(runId)} The run's diff: git apply ${runId}.patch`,
      });
    }
    await writePrivate(
      join(runDir, 'result.txt'),
      classified.status === 'completed' ? (facts.finalMessage ?? '') : (classified.errorMessage ?? ''),
    ).catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not write result.txt'));
    const record: TerminalRecord = {
      runId,
      terminal: {
        status: classified.status,
        reason: classified.reason,
        finalMessage: facts.finalMessage ?? null,
        errorMessage: classified.errorMessage,
        usage: facts.usage ?? null,
        denials,
        vendorSessionId: sessionId ?? null,
        exitCode: exit.exitCode,
        exitSignal: exit.signal,
        endedAt,
      },
      outcome: {
        runId,
        kind: 'outcome',
        target: outcomeTarget(run),
        body,
        format: 'markdown',
        ...(documents.length > 0 ? { documents } : {}),
        // A run that failed or was interrupted with a session can be resumed with one press.
        ...(sessionId && (classified.status === 'failed' || classified.status === 'interrupted')
          ? { buttons: [{ label: 'Resume', action: 'resume', arg: runId }] }
          : {}),
      },
    };
    // The database may be away right now: the record goes to the run directory
    // first, and the database write is retried until it lands or the service stops.
    await writeTerminalRecord(runDir, record).catch((err: unknown) =>
      deps.logger.warn({ err, runId }, 'could not write terminal.json'),
    );
    let outcome: DeliveryRow | null;
    try {
      outcome = await persistTerminal(
        {
          store: deps.store,
          logger: deps.logger,
          now: () => deps.clock.now(),
          ...(deps.terminalWrite ? { policy: deps.terminalWrite } : {}),
        },
        record,
        this.stopping.signal,
      );
    } catch (err) {
      if (!this.stopping.signal.aborted) throw err;
      deps.logger.warn(
        { runId, status: classified.status },
        'service stopping before the run end reached the database; the next start records it from terminal.json',
      );
      return;
    }
    if (entry) entry.ended = outcome ? classified.status : 'already_ended';
    await deps
      .onRunEnded?.(runId)
      .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not close the tool approvals of an ended run'));
    deps.logger.info({ runId, status: classified.status, reason: classified.reason }, 'run finished');
    this.tracer.trace(classified.status === 'completed' ? 'run_complete' : 'run_error', {
      runId,
      status: classified.status,
      reason: classified.reason,
      durationMs: endedAt.getTime() - run.createdAt.getTime(),
      exitCode: exit.exitCode,
      signal: exit.signal,
      inputTokens: facts.usage?.inputTokens ?? null,
      outputTokens: facts.usage?.outputTokens ?? null,
    });
    if (outcome) {
      await deps.outbox.attempt(outcome);
      // After the outcome, never before it: the last edit of the live status says how it ended.
      const status = deps.status;
      status?.editor.finish(run, () =>
        status.describe({
          status: classified.status,
          reason: classified.reason,
          elapsedMs: endedAt.getTime() - run.createdAt.getTime(),
          live: facts.live,
          usage: facts.usage ?? null,
          detail: run.options.progress,
        }),
      );
    } else {
      deps.status?.editor.forget(runId);
    }
  }

  /** ` codex has no login in <CODEX_HOME>: …` when doctor's file check finds none for `vendor`, else empty. */
  private async loginHint(vendor: VendorName): Promise<string> {
    if (vendor !== 'codex') return '';
    const home = this.deps.homes.codexHome;
    const state = await codexLoginState(home);
    return state.state === 'not_authenticated'
      ? ` codex has no login in ${home}: run \`CODEX_HOME=${home} codex login\`.`
      : '';
  }

  /** Posts a best-effort notice about a run to its origin; failures are logged, never thrown. */
  private notify(run: RunRow, text: string, buttons?: ButtonJson[]): void {
    const { deps } = this;
    void deps.outbox
      .send({
        runId: run.id as RunId,
        kind: 'notice',
        target: outcomeTarget(run),
        body: `${runTag(run.id)} ${text}`,
        ...(buttons ? { buttons } : {}),
      })
      .catch((err: unknown) => deps.logger.warn({ err, runId: run.id }, 'could not post a notice'));
  }

  /** Milestone notices for `progress` runs: at most one per minute, the latest milestones first. */
  private progressReporter(run: RunRow, vendor: Vendor): { onEvent(event: unknown): void; stop(): void } {
    let pending: string[] = [];
    let lastPostMs = -Infinity;
    let timer: NodeJS.Timeout | undefined;
    const flush = (): void => {
      timer = undefined;
      if (pending.length === 0) return;
      lastPostMs = this.deps.clock.nowMs();
      this.tracer.trace('progress', { runId: run.id, milestones: pending.length });
      this.notify(run, `progress: ${pending.slice(-5).join('; ')}`);
      pending = [];
    };
    return {
      onEvent: (event) => {
        const milestone = vendor.describeProgress?.(event);
        if (!milestone) return;
        pending.push(milestone);
        if (pending.length > 20) pending.shift();
        if (timer) return;
        const waitMs = Math.max(0, lastPostMs + PROGRESS_INTERVAL_MS - this.deps.clock.nowMs());
        timer = setTimeout(flush, waitMs);
        timer.unref();
      },
      // No progress after the outcome: a pending batch is dropped when the run ends.
      stop: () => {
        if (timer) clearTimeout(timer);
      },
    };
  }
}

/**
 * The last few notices and stderr lines, without repeating the error already shown and without
 * codex's constant stdin notice.
 */
function diagnosticsTail(notices: readonly string[], stderr: string, shown: string | null): string {
  const lines = [...notices.slice(-3), ...stderr.split('\n').slice(-8)]
    .map((line) => line.trim())
    .filter((line) => line !== '' && line !== shown && line !== 'Reading additional input from stdin...');
  return [...new Set(lines)].join('\n');
}

/**
 * What the outcome says about processes that may outlive the run: the pids baton could not kill,
 * or, where runs are followed only by their process tree and the run was stopped, that a process
 * which left the tree may have survived.
 */
function processNote(
  processes: RunProcesses | undefined,
  survivors: readonly number[],
  stopped: boolean,
): string | undefined {
  if (survivors.length > 0)
    return `Processes of this run may still be running (pid ${survivors.join(', ')}): baton could not stop them.`;
  if (stopped && processes?.mechanism === 'tree') {
    return 'This machine gives baton no cgroup for runs: a process that left the run’s process tree (e.g. started with setsid) may have survived.';
  }
  return undefined;
}

/**
 * Checks the task fits what the vendor reads on stdin (every task goes there).
 *
 * @throws BatonError `task_too_long` when the vendor cannot take that many characters at all.
 */
function checkTaskLength(vendor: Vendor, prompt: string): void {
  const max = vendor.maxStdinPromptChars;
  if (max === undefined || prompt.length <= max) return;
  const chars = codePoints(prompt);
  if (chars > max) {
    throw new BatonError(
      'task_too_long',
      `The task is ${chars.toLocaleString('en-US')} characters; ${vendor.name} accepts at most ${max.toLocaleString('en-US')}. Shorten it and send it again.`,
    );
  }
}

/** Characters as the CLIs count them: Unicode code points (an emoji is one, not two UTF-16 units). */
function codePoints(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}

/** Control flow: a cancel or shutdown arrived before the CLI was spawned, so it never is. */
class StoppedBeforeSpawn extends Error {}

/** The buttons of a watchdog advisory. */
/**
 * How the person who launched a run stops it, in the words of where they launched it: a chat
 * command, or in a terminal (`baton ask`) Ctrl-C or `baton cancel` from another terminal.
 */
export function howToStop(platform: Platform | string, runId: string): string {
  return platform === 'terminal'
    ? `press Ctrl-C, or run \`baton cancel ${runId}\` in another terminal, to stop it`
    : `/cancel ${runId} to stop it`;
}

function advisoryButtons(runId: string): ButtonJson[] {
  return [
    { label: 'Keep waiting', action: 'keep', arg: runId },
    { label: '+30 min', action: 'extend', arg: runId },
    { label: 'Stop', action: 'stop', arg: runId },
  ];
}

/** Outcome messages reply to the request that launched the run, in its thread. */
export function outcomeTarget(run: Pick<RunRow, 'origin'>): {
  platform: string;
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
} {
  return {
    platform: run.origin.platform,
    chatId: run.origin.chatId,
    ...(run.origin.threadId ? { threadId: run.origin.threadId } : {}),
    replyToMessageId: run.origin.messageId,
  };
}

async function writePrivate(path: string, content: string): Promise<void> {
  await writeFile(path, content, { mode: 0o600 });
  await chmod(path, 0o600);
}

function closeStream(stream: WriteStream | undefined): Promise<void> {
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => stream.end(() => resolve()));
}
