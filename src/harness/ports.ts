/**
 * What the harness needs from outside and does not build itself: the words of what it reports and
 * a look at a vendor's login. The harness runs CLIs and reports facts; the wiring fills these in
 * (from the wording module and the doctor), so the harness never imports either.
 */

/** Builds the `[run …]` tag that starts every message about a run (the wording's `runTag`). */
export type RunTagger = (runId: string) => string;

/** The sentences of the notices and outcome parts the supervisor posts about a run. */
export interface HarnessWords {
  runTag: RunTagger;
  /** The vendor's CLI was not on PATH when the service started. */
  vendorMissing(vendor: string): string;
  /** The run asks for tool approvals, which this vendor or service cannot give. */
  approvalsUnavailable(vendor: string): string;
  /** The task has more characters (code points) than the vendor reads on stdin. */
  taskTooLong(facts: { chars: number; vendor: string; maxChars: number }): string;
  /** No vendor event arrived within `afterMs` of the spawn; `platform` says how to stop the run. */
  noFirstEvent(facts: { vendor: string; afterMs: number; platform: string; runId: string }): string;
  /** No output for `forMs`. */
  silence(facts: { vendor: string; forMs: number; platform: string; runId: string }): string;
  /** The CLI is retrying its model call; `retry` is the vendor's own first line about it. */
  retrying(facts: { vendor: string; retry: string; platform: string; runId: string }): string;
  /** Appended to a retry notice when codex has no login in `home` (starts with a space). */
  codexNoLogin(home: string): string;
  /** How to log a vendor in, when its module has no words of its own for it. */
  loginFallback(vendor: string, home: string): string;
  /** An event longer than the artifact cap was left out; its first `keptBytes` are in `path`. */
  eventLeftOut(facts: { bytes: number; keptBytes: number; path: string }): string;
  /** A `progress` notice of the latest milestones, oldest first. */
  progress(milestones: readonly string[]): string;
  /** Processes of the run that could not be stopped. */
  processesSurvived(pids: readonly number[]): string;
  /** The run was stopped on a machine with no run cgroups: a process may have left its tree. */
  processesMayHaveLeftTree(): string;
  /** The executable could not be started (`detail`: the errno code and message). */
  spawnFailed(binaryPath: string, detail: string): string;
  /** The launch failed before the spawn, for a reason with no words of its own. */
  startFailed(message: string): string;
  /** Caption of the whole outcome sent as `result.md`. */
  resultCaption(runId: string): string;
  /** Caption of the run's patch file. */
  patchCaption(runId: string): string;
}

/**
 * Whether codex has no login in `codexHome`, as the doctor's file check sees it (no network).
 *
 * @throws Error when the check itself fails (the caller then says nothing about the login).
 */
export type CodexLoginMissing = (codexHome: string) => Promise<boolean>;
