/**
 * One run from its launch to its recorded end, as a chain of named steps over one run context:
 * prepare, spawn, clock, output, mark running, drain, then judge and finish. Each step reads and
 * sets the context; a step that throws ends the launch, and the judge words why.
 */
import type { WriteStream } from 'node:fs';
import { removeSnapshotIndexes } from '../diff.js';
import { startRunClock } from './clock.js';
import type { RunContext } from './context.js';
import { drainChild } from './drain.js';
import { finishRun } from './finish.js';
import { launchFailure } from './judge.js';
import { markRunning } from './mark-running.js';
import { openSpool, readOutput } from './output.js';
import { prepareLaunch } from './prepare.js';
import { spawnChild } from './spawn.js';

/** Runs `ctx.run` to its end. Never throws for a failed launch: it ends the run as failed. */
export async function executeRun(ctx: RunContext): Promise<void> {
  try {
    await launchAndWait(ctx);
  } catch (err) {
    const { deps, stopping } = ctx.services;
    const failure = launchFailure(err, stopping.aborted, deps.words);
    Object.assign(ctx.exit, failure);
    if (failure.shutdown) deps.logger.warn({ err, runId: ctx.runId }, 'run start interrupted by shutdown');
    else if (failure.spawnFailure) deps.logger.warn({ err, runId: ctx.runId }, 'run could not start');
  } finally {
    ctx.stopTimers();
    await closeStream(ctx.events);
  }
  await endRun(ctx);
}

/** The steps up to the CLI's end; between the spawn and the output readers there is no await. */
async function launchAndWait(ctx: RunContext): Promise<void> {
  const prepared = await prepareLaunch(ctx);
  const spool = openSpool(ctx);
  const live = spawnChild(ctx, prepared);
  const clock = startRunClock(ctx);
  const drained = readOutput(ctx, live, clock, spool);
  await markRunning(ctx, live);
  await drainChild(ctx, live, clock, drained);
}

/** Collects the run's facts and its launch snapshot, then judges and finishes it. */
async function endRun(ctx: RunContext): Promise<void> {
  const { deps } = ctx.services;
  const { run, runId, runDir, begun } = ctx;
  const facts = ctx.reducer?.facts() ?? { notices: [], eventCount: 0 };
  if (facts.usageInvalid !== undefined)
    deps.logger.warn(
      { runId, vendor: run.vendor, why: facts.usageInvalid },
      'the CLI reported usage figures that cannot be counted; the run’s usage is recorded as unknown',
    );
  const stderr = ctx.stderrTail.toString('utf8');
  ctx.exit.stderrTail = stderr;
  // A snapshot begun for a CLI that was never spawned (stopped first, or the spawn threw): its
  // index goes once its git ended, in the background: the failure is not held for a git that a
  // huge or hostile repository keeps running up to its time limit.
  if (begun && ctx.snapshotTaken !== begun) {
    void begun
      .then((taken) => (taken ? removeSnapshotIndexes(runDir) : undefined))
      .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not remove the snapshot index'));
  }
  // Never rejects (a failed snapshot is logged and undefined).
  const snapshot = await ctx.snapshotTaken;
  // A CLI that never started changed nothing: no diff, and its snapshot index goes.
  const diffFrom = ctx.exit.spawnFailure ? undefined : snapshot;
  if (snapshot && !diffFrom) {
    await removeSnapshotIndexes(runDir).catch((err: unknown) =>
      deps.logger.warn({ err, runId }, 'could not remove the snapshot index'),
    );
  }
  await finishRun(ctx.services, {
    run,
    installed: ctx.installed,
    facts,
    exit: ctx.exit,
    stderr,
    runDir,
    entry: ctx.entry,
    ...(diffFrom ? { snapshot: diffFrom } : {}),
  });
}

function closeStream(stream: WriteStream | undefined): Promise<void> {
  if (!stream) return Promise.resolve();
  return new Promise((resolve) => stream.end(() => resolve()));
}
