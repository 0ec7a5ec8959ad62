/**
 * Writing a run's end when the database may be away. A run that ends during an
 * outage still ends: its terminal state and outcome go first to `terminal.json` in the run
 * directory (0600), then to the database, retried with backoff until the write lands. Restart
 * reconciliation reads the same file, so a run that finished before a crash or a stop is recorded
 * as it ended rather than as `interrupted`.
 */
import { safeErrorMessage } from '../core/logger.js';
import { chmod, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { NewDelivery, RunStore, RunTerminal } from '../store/runs-repo.js';
import type { DeliveryRow } from '../store/schema.js';

/** What `terminal.json` holds: the database write a run's end needs, replayable later. */
export interface TerminalRecord {
  runId: RunId;
  terminal: RunTerminal;
  outcome: NewDelivery;
}

/** Backoff of the terminal write, in ms. */
export interface TerminalWritePolicy {
  /** Wait before the second attempt. @default 500 */
  firstDelayMs: number;
  /** Longest wait between attempts. @default 15_000 */
  maxDelayMs: number;
  /**
   * An attempt that has not settled after this long counts as failed and the next one starts.
   * postgres.js 3.4.9 can leave a transaction's promise pending forever when its connection is
   * cut mid-transaction (see `src/store/driver-faults.ts`); `finishRun` only changes an active
   * row, so a late commit of an abandoned attempt and a retry never both write. @default 20_000
   */
  attemptTimeoutMs: number;
}

/** The defaults of {@link TerminalWritePolicy}. */
export const TERMINAL_WRITE_POLICY: TerminalWritePolicy = {
  firstDelayMs: 500,
  maxDelayMs: 15_000,
  attemptTimeoutMs: 20_000,
};

/** The record's file name inside the run directory. */
export const TERMINAL_FILE = 'terminal.json';

/**
 * Writes `runDir/terminal.json` (0600) atomically: a temp file renamed over it, so a crash leaves
 * either the whole record or none.
 *
 * @throws the file system's error (ENOSPC, EACCES); the caller still tries the database.
 */
export async function writeTerminalRecord(runDir: string, record: TerminalRecord): Promise<void> {
  const path = join(runDir, TERMINAL_FILE);
  const temp = `${path}.tmp-${process.pid}`;
  const json = JSON.stringify({
    ...record,
    terminal: { ...record.terminal, endedAt: record.terminal.endedAt.toISOString() },
  });
  await writeFile(temp, json, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/**
 * Reads `runDir/terminal.json` of `runId`.
 *
 * @returns undefined when there is none, or when it is unreadable, malformed or names another run
 *   (the run directory is the service's own, but a half-written or foreign file must never end a
 *   run with made-up facts).
 */
export async function readTerminalRecord(
  runDir: string,
  runId: string,
  logger: Logger,
): Promise<TerminalRecord | undefined> {
  let text: string;
  try {
    text = await readFile(join(runDir, TERMINAL_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      logger.warn({ err, runId }, 'terminal.json is unreadable; the run is treated as interrupted');
    return undefined;
  }
  try {
    const parsed = JSON.parse(text) as {
      runId?: unknown;
      terminal?: Record<string, unknown>;
      outcome?: Record<string, unknown>;
    };
    const terminal = parsed.terminal;
    const outcome = parsed.outcome;
    const endedAt = typeof terminal?.endedAt === 'string' ? new Date(terminal.endedAt) : undefined;
    if (parsed.runId !== runId || !terminal || !outcome || !endedAt || Number.isNaN(endedAt.getTime()))
      throw new Error('missing fields');
    if (typeof terminal.status !== 'string' || typeof outcome.body !== 'string' || typeof outcome.kind !== 'string')
      throw new Error('wrong field types');
    return {
      runId: runId as RunId,
      terminal: { ...(terminal as unknown as RunTerminal), endedAt },
      outcome: outcome as unknown as NewDelivery,
    };
  } catch (err) {
    logger.warn({ err, runId }, 'terminal.json is malformed; the run is treated as interrupted');
    return undefined;
  }
}

/** Dependencies of {@link persistTerminal}. */
export interface TerminalWriteDeps {
  store: { runs: Pick<RunStore['runs'], 'finishRun'> };
  logger: Logger;
  /** Current time, for the outbox row's timestamps. */
  now: () => Date;
  policy?: TerminalWritePolicy;
}

/**
 * Writes a run's end to the database, retrying with exponential backoff until it lands or
 * `signal` aborts after a failed attempt (service shutdown: the record stays in `terminal.json` for the next start).
 * Logs one warning when the first attempt fails and one line when a retried write lands.
 *
 * @returns the outcome delivery written, or null when the run was no longer active (another
 *   process, or an earlier attempt that committed late, already ended it).
 * @throws the abort reason when `signal` aborts before a write landed.
 */
export async function persistTerminal(
  deps: TerminalWriteDeps,
  record: TerminalRecord,
  signal: AbortSignal,
): Promise<DeliveryRow | null> {
  const policy = deps.policy ?? TERMINAL_WRITE_POLICY;
  let delayMs = policy.firstDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      const row = await withTimeout(
        deps.store.runs.finishRun(record.runId, record.terminal, record.outcome, deps.now()),
        policy.attemptTimeoutMs,
      );
      if (attempt > 1)
        deps.logger.info(
          { runId: record.runId, attempts: attempt },
          'run end written to the database after it came back',
        );
      return row;
    } catch (err) {
      if (attempt === 1) {
        deps.logger.warn(
          { runId: record.runId, err: describe(err) },
          'could not write the run end to the database; it is kept in terminal.json and retried until the database answers',
        );
      }
    }
    // Shutdown does not skip the first attempt (a run stopped by the shutdown itself is written
    // at once when the database answers); it only ends the retries.
    signal.throwIfAborted();
    await sleep(delayMs, signal);
    delayMs = Math.min(delayMs * 2, policy.maxDelayMs);
  }
}

/** One line for the log; a failed query's parameters (the run's final message) are withheld. */
function describe(err: unknown): string {
  return err instanceof Error
    ? `${(err as NodeJS.ErrnoException).code ?? err.name}: ${safeErrorMessage(err)}`
    : String(err);
}

function withTimeout<T>(promise: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from the database within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
