/**
 * The clock step: the timers of a live run. The wall clock that stops it (moved by "+30 min"),
 * the grace a CLI gets to exit after its terminal event, the watchdog's advisories, and the live
 * status refresh or `progress` notices.
 */
import { startWatchdog, type Watchdog } from '../watchdog.js';
import type { RunContext } from './context.js';
import { advisoryButtons, notifyRun, progressReporter, type ProgressReporter } from './notices.js';
import { MAX_RUN_WALL_CLOCK_MS, type SupervisorDeps } from './types.js';

/** The live status is refreshed at least this often while a run is silent (its elapsed time), in ms. */
const STATUS_REFRESH_MS = 30_000;

/** The timers of a live run, as the output step drives them. */
export interface RunClock {
  watchdog: Watchdog;
  /** `progress` milestone notices, where the channel cannot edit a live status. */
  progress: ProgressReporter | undefined;
  /** The live status, where the channel can edit the run's started message. */
  status: NonNullable<SupervisorDeps['status']> | undefined;
  /** The live status's text now. */
  renderStatus: () => string;
  /** (Re)starts the grace the CLI gets to exit after its terminal event. */
  armFinishGrace: () => void;
  /** Whether that grace is running (any later event restarts it). */
  finishArmed: () => boolean;
  /** Clears the wall clock (the CLI has ended). */
  clearWallClock: () => void;
}

/**
 * Starts the run's timers; `ctx.entry.extend` moves its wall clock from now on and
 * `ctx.stopTimers` stops all but the wall clock.
 */
export function startRunClock(ctx: RunContext): RunClock {
  const { deps } = ctx.services;
  const { run, runId, entry } = ctx;
  let limitMs = ctx.timeoutMs;
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
  const platform = run.origin.platform;
  const advise = (text: string) => notifyRun(ctx.services, run, text, advisoryButtons(deps.words.buttons, runId));
  const watchdog = startWatchdog({
    firstEventMs: deps.limits.firstEventMs,
    inactivityMs: deps.limits.inactivityMs,
    onNoFirstEvent: () =>
      advise(deps.words.noFirstEvent({ vendor: run.vendor, afterMs: deps.limits.firstEventMs, platform, runId })),
    onSilence: () =>
      advise(deps.words.silence({ vendor: run.vendor, forMs: deps.limits.inactivityMs, platform, runId })),
  });
  // Where the channel can edit, the started message is the run's live status, and `progress`
  // adds detail to it; elsewhere (`baton ask`) `progress` posts milestone notices.
  const status = deps.status?.editor.enabledFor(platform) ? deps.status : undefined;
  const reducer = ctx.reducer!;
  const renderStatus = (): string =>
    status!.describe({
      status: 'running',
      elapsedMs: deps.clock.nowMs() - run.createdAt.getTime(),
      live: reducer.facts().live,
      detail: run.options.progress,
    });
  const refreshStatus = status
    ? setInterval(() => status.editor.update(run, renderStatus), STATUS_REFRESH_MS)
    : undefined;
  refreshStatus?.unref();
  const progress =
    run.options.progress && !status ? progressReporter(ctx.services, run, ctx.installed!.vendor) : undefined;
  ctx.stopTimers = () => {
    watchdog.stop();
    progress?.stop();
    if (refreshStatus) clearInterval(refreshStatus);
    if (finishTimer) clearTimeout(finishTimer);
  };
  return {
    watchdog,
    progress,
    status,
    renderStatus,
    armFinishGrace,
    finishArmed: () => finishTimer !== undefined,
    clearWallClock: () => clearTimeout(timer),
  };
}
