/**
 * Advisory timers of a run: no first event after `firstEventMs` (often a login or
 * config problem) and silence for `inactivityMs`. Both only notify; the wall clock that kills a
 * run is the supervisor's.
 */

/** Options of {@link startWatchdog}; durations in ms. */
export interface WatchdogOptions {
  firstEventMs: number;
  inactivityMs: number;
  onNoFirstEvent(): void;
  /** Called once per silent stretch; a later event re-arms it. */
  onSilence(): void;
}

/** A running watchdog. */
export interface Watchdog {
  /** Records vendor activity. */
  event(): void;
  stop(): void;
}

/** Starts both timers. */
export function startWatchdog(options: WatchdogOptions): Watchdog {
  let sawEvent = false;
  const first = setTimeout(() => {
    if (!sawEvent) options.onNoFirstEvent();
  }, options.firstEventMs);
  first.unref();
  let silence: NodeJS.Timeout | undefined;
  const arm = (): void => {
    if (silence) clearTimeout(silence);
    silence = setTimeout(options.onSilence, options.inactivityMs);
    silence.unref();
  };
  return {
    event: () => {
      sawEvent = true;
      arm();
    },
    stop: () => {
      clearTimeout(first);
      if (silence) clearTimeout(silence);
    },
  };
}
