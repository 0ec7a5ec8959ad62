/**
 * The one way a test waits for something to become true: poll a condition until it holds or a
 * deadline passes, then fail saying what was awaited. Tests wait for conditions, never for
 * time: the deadline is a hang guard on a loaded machine, not a speed bound.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How {@link waitFor} polls. */
export interface WaitOptions {
  /** How long to keep checking before failing, in milliseconds. @default 30_000 */
  timeoutMs?: number;
  /** The pause between two checks, in milliseconds. @default 25 */
  intervalMs?: number;
  /** What is awaited, for the failure message (e.g. `'the run to complete'`). @default 'the condition' */
  what?: string;
  /** Stops waiting, failing, once aborted: e.g. a signal aborted when the test ends. */
  signal?: AbortSignal;
}

/**
 * Resolves once `predicate` returns true (or a promise of true). The predicate is checked once
 * more after the deadline, so a condition that became true during the last pause still counts.
 *
 * @throws Error `timed out after <timeoutMs> ms waiting for <what>` when the deadline passes, or
 *   `stopped waiting for <what>: the test ended` when `signal` aborts first. An error thrown by
 *   the predicate is passed on unchanged.
 */
export async function waitFor(predicate: () => boolean | Promise<boolean>, options: WaitOptions = {}): Promise<void> {
  const { timeoutMs = 30_000, intervalMs = 25, what = 'the condition', signal } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (signal?.aborted) throw new Error(`stopped waiting for ${what}: the test ended`);
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}
