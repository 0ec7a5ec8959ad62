/**
 * The run context: everything one run's steps share, passed from step to step in one object
 * rather than held in closures, so each step says what it reads and what it sets.
 */
import type { WriteStream } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { RunId } from '../../core/ids.js';
import type { RunRow } from '../../store/schema.js';
import type { ExitFacts } from '../outcome.js';
import type { RunProcesses } from '../run-cgroup.js';
import type { RunStream } from '../run-stream.js';
import type { Tracer } from '../traces.js';
import type { TreeSnapshot } from '../diff.js';
import type { LaunchRequest, StreamReducer, VendorSession } from '../vendors/types.js';
import type { LaunchSnapshots } from './launch-snapshots.js';
import type { TurnInput } from './turns.js';
import type { ActiveRun, InstalledVendor, SupervisorDeps } from './types.js';

/** What every run of one supervisor shares: its dependencies and its own lifetime. */
export interface RunServices {
  deps: SupervisorDeps;
  tracer: Tracer;
  /** Aborted at shutdown: a launch failing then was interrupted, and run-end writes stop retrying. */
  stopping: AbortSignal;
  snapshots: LaunchSnapshots;
}

/** How the child ended: its exit code or signal once its pipes closed, or the error that kept it from starting. */
export interface ChildEnd {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  spawnError?: NodeJS.ErrnoException;
}

/** The spawned CLI and what follows it, set by the spawn step. */
export interface LiveChild {
  child: ChildProcess;
  /** Resolves once the child's pipes closed, or it failed to start. */
  ended: Promise<ChildEnd>;
  /** Resolves at the child's exit (before its pipes may have closed). */
  exited: Promise<void>;
  /** The run's processes (its cgroup or its process tree); undefined when nothing was spawned. */
  processes: RunProcesses | undefined;
  /** The CLI exited on its own, or is being stopped after its terminal event: a later stop does not relabel it. */
  finishedOnItsOwn: boolean;
  /** `pending` until the launch snapshot resolved; `withheld` when the run was stopped first. */
  taskState: 'pending' | 'sent' | 'withheld';
  /** Resolves once the task went on stdin (or was withheld). */
  taskSent: Promise<void>;
  /** Resolves once `prompt.md` is written (or failed, logged). */
  promptWritten: Promise<void>;
  /** The stop under way, once the run is being stopped. */
  stopping?: Promise<void>;
  /** The CLI's session over its stdio, for a vendor driven as one (codex app-server). */
  session?: VendorSession;
  /** The CLI's open input, once its task was sent, when it takes more messages on stdin. */
  turns?: TurnInput;
}

/** One run's state from its launch to its end. */
export interface RunContext {
  services: RunServices;
  run: RunRow;
  runId: RunId;
  request: LaunchRequest;
  /** The wall-clock limit the run starts with, in ms. */
  timeoutMs: number;
  entry: ActiveRun;
  /** `<runsDir>/<run id>`. */
  runDir: string;
  /** The vendor's CLI; undefined when it was not found at start (the launch fails on that). */
  installed: InstalledVendor | undefined;
  reducer: StreamReducer | undefined;
  /** What the run's end is judged from; filled in by every step. */
  exit: ExitFacts;
  /** The last bytes of stderr. */
  stderrTail: Buffer;
  /** `events.jsonl`, once opened. */
  events?: WriteStream;
  /** The child's stdout once spawned: a failing spool resumes it. */
  childOutput?: Readable;
  stream?: RunStream;
  live?: LiveChild;
  /** The launch snapshot the CLI's task waits for; undefined while nothing was spawned. */
  snapshotTaken?: Promise<TreeSnapshot | undefined>;
  /** A snapshot begun in the launch transaction for this run. */
  begun: Promise<TreeSnapshot | undefined> | undefined;
  /** A snapshot begun for this run and discarded when it was queued: done once its index is gone. */
  discarded: Promise<void> | undefined;
  /** Called once the CLI's open input is closed after its last turn (see turns.ts): arms the finish grace. */
  onInputClosed?: () => void;
  /** Stops the watchdog, the status refresh, progress notices and the finish grace. */
  stopTimers: () => void;
  /** Where the launch spent its time before the spawn, in ms since its start, logged with 'run started'. */
  spans: Record<string, number>;
  launchStartMs: number;
}

/** A new context for `run`, with the launch snapshot begun for it (if any) taken over. */
export function newRunContext(
  services: RunServices,
  run: RunRow,
  request: LaunchRequest,
  timeoutMs: number,
  entry: ActiveRun,
  runDir: string,
): RunContext {
  const installed = services.deps.vendors.get(run.vendor);
  return {
    services,
    run,
    runId: run.id as RunId,
    request,
    timeoutMs,
    entry,
    runDir,
    installed,
    reducer: installed?.vendor.newReducer(
      request.sessionUsageBefore ? { sessionUsageBefore: request.sessionUsageBefore } : undefined,
    ),
    exit: {
      exitCode: null,
      signal: null,
      timedOut: false,
      ...(request.resumeSessionId ? { resumeSessionId: request.resumeSessionId } : {}),
      ...(run.options.maxTokens !== undefined ? { maxTokens: run.options.maxTokens } : {}),
    },
    stderrTail: Buffer.alloc(0),
    ...services.snapshots.takeFor(run.id as RunId),
    stopTimers: () => {},
    spans: {},
    launchStartMs: performance.now(),
  };
}

/** Records how long the launch took up to `name`, in ms since its start. */
export function markSpan(ctx: RunContext, name: string): void {
  ctx.spans[name] = Math.round((performance.now() - ctx.launchStartMs) * 10) / 10;
}
