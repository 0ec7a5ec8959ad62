/**
 * The drain step: waits for the CLI's end with every byte of its output read, stops what it left
 * behind, and puts how it ended into the run's exit facts.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { terminateRun } from '../process-tree.js';
import type { RunClock } from './clock.js';
import type { LiveChild, RunContext } from './context.js';
import { processNote } from './judge.js';

/** Waits for the run's CLI to end and records its exit code, signal or spawn error in `ctx.exit`. */
export async function drainChild(
  ctx: RunContext,
  live: LiveChild,
  clock: RunClock,
  drained: Promise<unknown>,
): Promise<void> {
  const { deps } = ctx.services;
  const { runId } = ctx;
  const { child, processes } = live;
  // A CLI that has exited is judged once its pipes are drained, or after a short drain when a
  // descendant still holds them: the descendants are stopped and the pipes closed.
  const heldOpen = await Promise.race([
    drained.then(() => false),
    live.exited.then(() =>
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
  const result = await live.ended;
  await live.promptWritten;
  await live.taskSent;
  clock.clearWallClock();
  ctx.stream?.end();
  if (live.stopping) await live.stopping;
  // Whatever the run started and left behind (a server, a `setsid` tool) ends with the run.
  const survivors = (await processes?.killAll(deps.limits.killGraceMs)) ?? [];
  ctx.exit.processNote = processNote(processes, survivors, Boolean(live.stopping), deps.words);
  if (result.spawnError) {
    // ENOENT, EACCES: the CLI never ran. (E2BIG and the like throw from spawn: the launch's catch.)
    const detail = `${result.spawnError.code ?? ''} ${result.spawnError.message}`.trim();
    ctx.exit.spawnFailure = {
      reason: 'spawn_failed',
      message: deps.words.spawnFailed(ctx.installed!.binaryPath, detail),
    };
  } else {
    ctx.exit.exitCode = result.exitCode;
    ctx.exit.signal = result.signal;
  }
}
