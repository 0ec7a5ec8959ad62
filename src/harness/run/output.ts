/**
 * The output step: the CLI's stdout parsed into the run's facts (and spooled to `events.jsonl`),
 * its stderr's tail kept, and what the output tells the run: a refused login stops it, a retry
 * is noticed once, the token cap stops it, a terminal event starts its exit grace.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { RunStream } from '../run-stream.js';
import type { RunClock } from './clock.js';
import type { LiveChild, RunContext } from './context.js';
import { loginHint, notifyRun } from './notices.js';

const STDERR_TAIL_BYTES = 4096;
/** Write buffer of `events.jsonl`, in bytes. */
const SPOOL_BUFFER_BYTES = 1024 * 1024;
/** A run whose total output passes this many times the spool cap is killed. */
const OUTPUT_LIMIT_FACTOR = 4;

/**
 * Opens the run's `events.jsonl` (set as `ctx.events`). A failing spool (disk full) neither stops
 * the run nor leaves its output paused.
 */
export function openSpool(ctx: RunContext): WriteStream {
  const { deps } = ctx.services;
  // A 1 MiB buffer: with the 16 KiB default the child's output was paused after most chunks.
  const spool = createWriteStream(join(ctx.runDir, 'events.jsonl'), {
    mode: 0o600,
    flags: 'a',
    highWaterMark: SPOOL_BUFFER_BYTES,
  });
  ctx.events = spool;
  spool.once('error', (err) => {
    deps.logger.warn({ err, runId: ctx.runId }, 'events.jsonl write failed; spooling stops, the run continues');
    ctx.stream?.detachSpool();
    ctx.childOutput?.resume();
  });
  spool.on('error', () => {}); // later errors of the same broken file: already reported once
  return spool;
}

/**
 * Reads the child's stdout and stderr into the run (synchronously: see the spawn step).
 *
 * @returns a promise that resolves once every byte of both pipes was read.
 */
export function readOutput(ctx: RunContext, live: LiveChild, clock: RunClock, spool: WriteStream): Promise<unknown> {
  const { deps } = ctx.services;
  const { child } = live;
  const { runId } = ctx;
  const stopIfRefused = authStop(ctx);
  const onEvent = eventHandler(ctx, clock, stopIfRefused);
  const stream = new RunStream(
    {
      maxEventBytes: deps.limits.maxEventBytes,
      // An answer can be longer than one event may be in memory: it goes to disk, up to the
      // run's artifact cap, and is read back once.
      spill: { dir: ctx.runDir, capBytes: deps.limits.maxRunArtifactBytes },
      maxFramingErrors: deps.limits.maxFramingErrors,
      maxSpoolBytes: deps.limits.maxRunArtifactBytes,
      maxOutputBytes: deps.limits.maxRunArtifactBytes * OUTPUT_LIMIT_FACTOR,
    },
    ctx.reducer!,
    spool,
    {
      onEvent,
      // Progress milestones come from events the reducer skips (codex item.started, …).
      ...(clock.progress ? { reads: () => true } : {}),
      onSession: (sessionId) =>
        void deps.store.runs
          .setVendorSession(runId, sessionId)
          .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not store session id')),
      onDroppedLine: (drop) => {
        deps.logger.warn(
          { runId, bytes: drop.bytes, path: drop.path },
          'an event line passed max_run_artifact_mb and was dropped',
        );
        const note = deps.words.eventLeftOut({
          bytes: drop.bytes,
          keptBytes: deps.limits.maxRunArtifactBytes,
          path: drop.path,
        });
        ctx.exit.streamNote = ctx.exit.streamNote ? `${ctx.exit.streamNote}\n${note}` : note;
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
      onViolation: (reason) => void ctx.entry.stop({ killedFor: reason }),
    },
  );
  ctx.stream = stream;
  child.stdout?.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk) && !spool.errored && !child.stdout?.isPaused()) {
      child.stdout?.pause();
      spool.once('drain', () => child.stdout?.resume());
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stopIfRefused({ stderr: chunk.toString('utf8') });
    ctx.stderrTail = Buffer.concat([ctx.stderrTail, chunk]);
    if (ctx.stderrTail.length > STDERR_TAIL_BYTES) ctx.stderrTail = ctx.stderrTail.subarray(-STDERR_TAIL_BYTES);
  });
  child.stdout?.once('end', () => live.session?.closed());
  // Every byte the child printed is read before its outcome is judged: the exit can be
  // observed before the last 'data' events of its pipes are delivered.
  return Promise.all(
    [child.stdout, child.stderr].map((pipe) =>
      pipe
        ? finished(pipe).catch((err: unknown) => deps.logger.warn({ err, runId }, 'reading the child output failed'))
        : undefined,
    ),
  );
}

type AuthStop = (source: { event: unknown } | { stderr: string }) => boolean;

/**
 * A 401 will not pass by retrying (codex retries it with growing pauses): the run is stopped at
 * the first, with the CLI's words and how to log it in.
 *
 * @returns a check of one event or stderr chunk: true once the credentials were refused.
 */
function authStop(ctx: RunContext): AuthStop {
  const { deps } = ctx.services;
  const { run } = ctx;
  const vendor = ctx.installed!.vendor;
  let authFailed = false;
  return (source) => {
    if (authFailed) return true;
    const words = vendor.describeAuthFailure?.(source);
    if (words === undefined) return false;
    authFailed = true;
    const home = run.vendor === 'codex' ? deps.homes.codexHome : deps.homes.claudeConfigDir;
    const fix = vendor.loginFix?.(home) ?? deps.words.loginFallback(run.vendor, home);
    deps.logger.warn(
      { runId: ctx.runId, vendor: run.vendor },
      'the CLI is not logged in or its credentials were refused; stopping the run',
    );
    ctx.exit.authFailure = { words, fix };
    void ctx.entry.stop({});
    return true;
  };
}

/** What each vendor event (undefined: spooled unparsed, activity only) does to the live run. */
function eventHandler(ctx: RunContext, clock: RunClock, stopIfRefused: AuthStop): (event: unknown) => void {
  const { services, run, runId } = ctx;
  const { deps } = services;
  const vendor = ctx.installed!.vendor;
  const reducer = ctx.reducer!;
  let retryNoticed = false;
  // While the CLI's input is open its turns go on: the finish grace waits until it is closed.
  ctx.onInputClosed = () => clock.armFinishGrace();
  return (event) => {
    clock.watchdog.event();
    if (event !== undefined) ctx.live?.session?.receive(event);
    if (event === undefined) {
      if (clock.finishArmed()) clock.armFinishGrace();
      return;
    }
    ctx.live?.turns?.onEvent(event);
    clock.progress?.onEvent(event);
    clock.status?.editor.update(run, clock.renderStatus);
    const refused = stopIfRefused({ event });
    const retry = retryNoticed || refused ? undefined : vendor.describeRetry?.(event);
    if (retry) {
      retryNoticed = true;
      const words = deps.words.retrying({ vendor: run.vendor, retry, platform: run.origin.platform, runId });
      // A codex with no login in the CODEX_HOME runs use (doctor's file check) retries in
      // vain once the network is back: say so with the retry.
      void loginHint(services, run.vendor)
        .catch(() => '')
        .then((hint) => notifyRun(services, run, `${words}${hint}`));
    }
    const facts = reducer.facts();
    // The token cap: checked whenever the CLI reports usage (codex at turn.completed, claude at
    // each result); the judge names the reason.
    const { maxTokens } = run.options;
    if (maxTokens !== undefined && facts.usage && facts.usage.inputTokens + facts.usage.outputTokens > maxTokens)
      void ctx.entry.stop({});
    if ((clock.finishArmed() || facts.terminal) && !ctx.live?.turns?.open()) clock.armFinishGrace();
  };
}
