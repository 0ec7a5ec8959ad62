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
  /** The live status's step while a completed run's verification runs `commands`. */
  verifyingStep(commands: readonly string[]): string;
  /** Caption of the whole outcome sent as `result.md`. */
  resultCaption(runId: string): string;
  /** Caption of the run's patch file. */
  patchCaption(runId: string): string;
  /** A plan window is `usedPercent` full (at or past `[harness] quota_warn_percent`) until `resetsAt`. */
  quotaWarning(facts: { vendor: string; window: string; usedPercent: number; resetsAt: Date }): string;
  /** The labels of the buttons under the supervisor's outcome and watchdog messages. */
  buttons: HarnessButtonLabels;
  /** The error of a run a restart of the service stopped (what reconciliation records). */
  interruptedByRestart: string;
}

/** Labels of the buttons the harness puts under its messages, as the owner reads them. */
export interface HarnessButtonLabels {
  /** Continue a failed or interrupted run's session. */
  resume: string;
  /** Ask the agent to fix what the run's verification found. */
  fix: string;
  /** A watchdog advisory's "nothing to do, keep going". */
  keepWaiting: string;
  /** A watchdog advisory's half-hour extension. */
  extend: string;
  /** A watchdog advisory's stop. */
  stop: string;
  /** Under a `quota_exhausted` outcome: run the same task again once the plan's limit resets. */
  runAtReset: string;
  /** Under a `quota_exhausted` outcome: run the same task on the other vendor's CLI. */
  runOn(vendor: string): string;
}

/** The words restart reconciliation needs: the resume button and the interrupted run's error. */
export type ReconcileWords = Pick<HarnessWords, 'buttons' | 'interruptedByRestart'>;

/** Labels of the three buttons under an approval message. */
export interface ApprovalButtonLabels {
  allow: string;
  /** Allows this call and the later calls of its kind in the same run. */
  allowForRun: string;
  deny: string;
}

/**
 * The sentences of tool approvals: the approval message, the timeout notice, what the presser is
 * answered, and what claude is told about a decision. Waits are in ms.
 */
export interface ApprovalWords {
  runTag: RunTagger;
  buttons: ApprovalButtonLabels;
  /** First line of an approval message (ends with a newline); `tool` is already made visible. */
  askHeader(runId: string, tool: string, vendor: string): string;
  /** The warning on a call that always asks; `path` is already made visible, possibly empty. */
  alwaysAsksWarning(mark: string, path: string): string;
  /**
   * The end of an approval message (starts with the blank line after the input): the warnings,
   * the timeout, and what "Allow for this run" covers (`covers`: the kind in words; undefined for
   * a call that always asks).
   */
  askFooter(facts: { warnings: readonly string[]; waitMs: number; covers: string | undefined }): string;
  /**
   * The note that ends a cut tool input (starts with a newline): `more` characters left out, and
   * where the whole input is (`file`: the name it is sent under; undefined: `/runs`).
   */
  inputCutNote(more: number, file?: string): string;
  /** Caption of the file with the whole input of a tool call. */
  wholeInputCaption(runId: string, file: string): string;
  /** The notice when nobody answered within `waitMs` and the call was denied. */
  timeoutNotice(facts: { runId: string; tool: string; waitMs: number }): string;
  /** What claude is told when the owner denied the call. */
  deniedByOwner: string;
  /** What claude is told when nobody answered within `waitMs`. */
  deniedByTimeout(waitMs: number): string;
  /** What claude is told when the run ended before an answer. */
  deniedRunGone: string;
  /** The presser's answers. `allowedForRun` gets the kind in words. */
  pressed: {
    runEnded: string;
    alreadyDecided(decision: string): string;
    noSuchApproval: string;
    denied: string;
    allowed: string;
    allowedForRun(kind: string): string;
  };
}

/**
 * Whether codex has no login in `codexHome`, as the doctor's file check sees it (no network).
 *
 * @throws Error when the check itself fails (the caller then says nothing about the login).
 */
export type CodexLoginMissing = (codexHome: string) => Promise<boolean>;
