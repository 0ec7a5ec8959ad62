/**
 * The spawn step: the CLI started in its own process group, its processes followed, its launch
 * snapshot taken and then its task written to its stdin, and the run's stop wired to it.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { terminateRun } from '../process-tree.js';
import { trackRunProcesses } from '../run-cgroup.js';
import { markSpan, type ChildEnd, type LiveChild, type RunContext } from './context.js';
import type { PreparedLaunch } from './prepare.js';
import { writePrivate } from './private-file.js';
import { followTurns } from './turns.js';
import type { StopReason } from './types.js';

/**
 * Spawns the prepared CLI. Synchronous on purpose: from the spawn to the output readers there is
 * no await, so the pipes stay paused until read and a CLI that prints its whole stream at once
 * never waits on a full pipe (under execa, which resumed them, such a stream was lost, and its
 * session id and stderr with it).
 *
 * @returns the live child, also set as `ctx.live`; `ctx.entry.stop` now stops it.
 * @throws Error when node cannot spawn at all (E2BIG and the like); ENOENT and EACCES come as
 *   the child's `spawnError` instead.
 */
export function spawnChild(ctx: RunContext, prepared: PreparedLaunch): LiveChild {
  const { deps, tracer } = ctx.services;
  const { run, runId, request } = ctx;
  // node:child_process, not execa: execa's own work around a spawn (option handling, its
  // stream and promise plumbing) cost the launch ~3-5 ms of CPU at baton's heap on the 2-core
  // machine, part of it before the fork. Exactly `env` (nothing inherited); raw
  // Buffers; the child is never killed by this process's exit.
  const child = spawn(prepared.installed.binaryPath, prepared.argv, {
    cwd: run.cwd,
    env: prepared.env,
    // The task goes on stdin once the launch snapshot is taken (below), then stdin is closed:
    // an open stdin pipe hangs codex forever.
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true, // own session and process group, so a group signal reaches its tools
  });
  ctx.childOutput = child.stdout ?? undefined;
  // How the child ended: its exit code or signal once its pipes are closed, or the error that
  // kept it from starting (ENOENT, EACCES: 'error' with no pid, then no exit).
  const ended = new Promise<ChildEnd>((resolve) => {
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (child.pid === undefined) resolve({ exitCode: null, signal: null, spawnError: err });
      else deps.logger.warn({ err, runId }, 'the CLI process reported an error');
    });
    child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
  });
  const live: LiveChild = {
    child,
    ended,
    exited: Promise.resolve(),
    processes: undefined,
    finishedOnItsOwn: false,
    taskState: 'pending',
    taskSent: Promise.resolve(),
    promptWritten: Promise.resolve(),
  };
  // Once the CLI has exited on its own, or is being stopped after its terminal event, the run
  // has finished: a cancel or shutdown arriving then must not relabel its outcome.
  live.exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      if (!live.stopping) live.finishedOnItsOwn = true;
      resolve();
    }),
  );
  ctx.live = live;
  ctx.entry.pid = child.pid;
  markSpan(ctx, 'spawned');
  if (child.pid !== undefined) openSession(ctx, live, prepared);
  // Stamped at the spawn itself, before the cgroup move below (which can take ms): the
  // dispatch-overhead bench times update → spawn by this trace.
  if (child.pid !== undefined)
    tracer.trace('run_start', {
      runId,
      vendor: run.vendor,
      cwd: run.cwd,
      pid: child.pid,
      resume: Boolean(request.resumeSessionId),
    });
  followChild(ctx, live, prepared.task, prepared);
  ctx.entry.stop = (why) => stopChild(ctx, live, why);
  if (prepared.installed.vendor.stdinTurns)
    ctx.entry.steer = async (text) => {
      await live.taskSent;
      return live.turns && !live.stopping ? live.turns.steer(text) : 'ended';
    };
  else if (live.session) {
    const { session } = live;
    // codex app-server: `turn/steer` adds to the running turn; refused (the turn already ended),
    // the message becomes a resumed run after this one, as for a CLI that cannot be steered.
    ctx.entry.steer = async (text) => {
      await live.taskSent;
      if (live.stopping || live.taskState !== 'sent') return 'ended';
      return session.steer(text).then(
        () => 'added' as const,
        () => 'ended' as const,
      );
    };
  }
  return live;
}

/**
 * Opens the vendor's session on the child, for a CLI driven as one (codex app-server): its
 * handshake starts now, while the launch snapshot is taken; the task follows it (below).
 */
function openSession(ctx: RunContext, live: LiveChild, prepared: PreparedLaunch): void {
  const { vendor } = prepared.installed;
  if (!vendor.openSession) return;
  const { deps } = ctx.services;
  const { child } = live;
  const { runId } = ctx;
  // Prepare refused a run that asks for approvals where there are none (see prepareLaunch).
  const approvals = ctx.request.approvalToken !== undefined ? deps.sessionApprovals?.(ctx.run) : undefined;
  live.session = vendor.openSession({
    request: prepared.launch,
    cwd: ctx.run.cwd,
    write: (text) => {
      if (child.stdin?.writable) child.stdin.write(text);
    },
    end: () => child.stdin?.end(),
    onError: (err) => deps.logger.warn({ err, runId }, 'a step of the CLI session failed'),
    ...(approvals ? { approvals } : {}),
  });
  ctx.entry.session = live.session;
}

/**
 * What follows the spawn: the launch snapshot (then the task on stdin), the owner's copy of the
 * prompt, and the run's processes tracked.
 */
function followChild(ctx: RunContext, live: LiveChild, task: string, prepared: PreparedLaunch): void {
  const { deps, snapshots } = ctx.services;
  const { run, runId, runDir, request } = ctx;
  const { child } = live;
  // The launch snapshot only has to be complete before the CLI can change anything, and
  // neither CLI acts (nor calls its model) before it has its task on stdin (measured, see
  // each vendor's stdinPayload). Begun in the launch transaction when the dispatcher could,
  // else now, while the CLI starts (a queued run started later, a resumed launch). A CLI
  // that could not be spawned changes nothing: no snapshot, no task.
  const { begun, discarded } = ctx;
  const snapshotTaken =
    child.pid === undefined
      ? Promise.resolve(undefined)
      : (begun ?? (discarded ? discarded.then(() => snapshots.take(run, runDir)) : snapshots.take(run, runDir)));
  ctx.snapshotTaken = snapshotTaken;
  // The prompt's copy in the run directory is for the owner only (the CLI gets it on stdin):
  // written after the spawn, off the launch path.
  live.promptWritten = writePrivate(join(runDir, 'prompt.md'), request.prompt).catch((err: unknown) =>
    deps.logger.warn({ err, runId }, 'could not write prompt.md'),
  );
  live.processes =
    child.pid === undefined
      ? undefined
      : trackRunProcesses(deps.cgroups ?? { unavailable: 'not configured' }, runId, child.pid);
  markSpan(ctx, 'tracked');
  if (live.processes?.fallbackReason)
    deps.logger.warn(
      { runId, why: live.processes.fallbackReason },
      'no cgroup for this run; following its process tree instead',
    );
  // A CLI that exits before reading its task makes the write fail (EPIPE); its exit says why.
  child.stdin?.on('error', (err) => deps.logger.warn({ err, runId }, 'could not write the task to the CLI'));
  live.taskSent = snapshotTaken.then((snapshot) => {
    if (live.taskState !== 'pending' || child.pid === undefined) return;
    live.taskState = 'sent';
    const turns = prepared.installed.vendor.stdinTurns;
    if (live.session) live.session.sendTask(task);
    else if (turns && child.stdin) {
      // The CLI takes more messages: stdin stays open until its last turn ends.
      child.stdin.write(task);
      live.turns = followTurns(child.stdin, turns, deps.limits.finishGraceMs, () => ctx.onInputClosed?.());
    } else child.stdin?.end(task);
    markSpan(ctx, 'task_sent');
    deps.logger.debug({ runId, spansMs: ctx.spans }, 'task sent to the CLI');
    // The launch tree, while the CLI waits for its model: the run's end then does not write it.
    if (snapshot) snapshots.writeTreeAfterTask(snapshot);
  });
}

/** How long an owner's cancel waits for a CLI it asked to stop before it kills it, in ms. */
export const STOP_ASK_WAIT_MS = 5_000;

/**
 * Stops the run's processes, once: the CLI's process group with the kill grace, and what its
 * cgroup or tree holds. Only a run still working is relabelled with `why`. The owner's cancel of
 * a CLI that takes requests on stdin first asks it to stop ({@link StdinTurns.interrupt}) and
 * waits up to {@link STOP_ASK_WAIT_MS} for it to exit by itself; what is left is killed either way.
 */
function stopChild(ctx: RunContext, live: LiveChild, why: StopReason): Promise<void> {
  const { child } = live;
  // A run stopped before its task was sent never gets it; its stdin is closed.
  if (live.taskState === 'pending') {
    live.taskState = 'withheld';
    child.stdin?.destroy();
  }
  // Leftover processes are stopped either way; only a run still working is relabelled.
  const working = !live.finishedOnItsOwn && !ctx.exit.stoppedAfterTerminal;
  if (working) Object.assign(ctx.exit, why);
  const ask = working && why.cancelledBy !== undefined && !live.stopping ? askToStop(ctx, live) : undefined;
  if (!ask) live.turns?.close();
  const terminate = () =>
    terminateRun({
      rootPid: child.pid,
      runId: ctx.runId,
      graceMs: ctx.services.deps.limits.killGraceMs,
      ...(live.processes ? { trackedPids: live.processes.pids } : {}),
    }).then(() => undefined);
  live.stopping ??= ask ? ask.then(terminate) : terminate();
  return live.stopping;
}

/**
 * Asks a CLI whose turn runs to stop it: codex app-server's `turn/interrupt` through its session
 * (`VendorSession.interrupt`), or claude's interrupt control request on its open stdin
 * ({@link StdinTurns.interrupt}). Resolves once it exited by itself or {@link STOP_ASK_WAIT_MS}
 * passed, with `ctx.exit.stopAsked` saying which; undefined when the CLI cannot be asked (no
 * session or open input, or its task was never sent), and it is stopped at once.
 */
function askToStop(ctx: RunContext, live: LiveChild): Promise<void> | undefined {
  const { session } = live;
  if (session && live.taskState === 'sent')
    return session.interrupt().then(
      () => awaitAskedStop(ctx, live),
      (err: unknown) => {
        ctx.services.deps.logger.info({ err, runId: ctx.runId }, 'the CLI could not be asked to stop its turn');
        ctx.exit.stopAsked = 'killed';
      },
    );
  if (live.turns?.interrupt() === true) return awaitAskedStop(ctx, live);
  return undefined;
}

/** Waits up to {@link STOP_ASK_WAIT_MS} for a CLI asked to stop to exit, and records whether it did. */
async function awaitAskedStop(ctx: RunContext, live: LiveChild): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    live.exited.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), STOP_ASK_WAIT_MS);
    }),
  ]).finally(() => clearTimeout(timer));
  ctx.exit.stopAsked = stopped ? 'stopped' : 'killed';
  live.turns?.close();
}
