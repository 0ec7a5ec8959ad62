/** What `baton ask --json` prints, built from the run's row. */
import type { RunId } from '../core/ids.js';
import type { RunRow } from '../store/schema.js';

/** What `baton ask --json` prints for a run that launched (and, via the service, for a refusal). */
export interface AskReport {
  runId?: string;
  status: string | undefined;
  code?: string;
  reason?: string | null;
  vendor?: string | undefined;
  cwd?: string | undefined;
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: unknown;
  /** Tool calls the CLI denied (claude). */
  denials?: unknown[];
  /** With `--no-wait`, for a queued run: how to follow it. */
  follow?: string;
  messages: string[];
}

/** The `--json` report of a finished run. */
export function askReport(runId: RunId, run: RunRow | undefined, messages: string[]): AskReport {
  return {
    runId,
    status: run?.status,
    reason: run?.reason ?? null,
    vendor: run?.vendor,
    cwd: run?.cwd,
    finalMessage: run?.finalMessage ?? null,
    errorMessage: run?.errorMessage ?? null,
    usage: run?.usage ?? null,
    denials: run?.denials ?? [],
    messages,
  };
}
