/**
 * Plain fact types: what the harness and the store know about a run, in the shapes the wording
 * module puts into words. No behaviour and no imports of other layers, so every layer may use them.
 */
import type { VendorName } from '../core/vendor-name.js';

/** Run statuses: `starting` and `running` are active, `queued` waits for its turn, the rest terminal. */
export const RUN_STATUSES = [
  'starting',
  'running',
  'completed',
  'failed',
  'blocked',
  'cancelled',
  'interrupted',
  'queued',
] as const;

/** One of {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number];

/** Why a file is left out of a patch. */
export type LeftOutReason = 'ignored_before' | 'secret_name' | 'secret_content';

/** One file left out of a run's patch. */
export interface LeftOutFile {
  /** Path from the top of the working tree, as git names it. */
  path: string;
  why: LeftOutReason;
}

/** The facts of a run that messages about it show; a stored run row has them all. */
export interface RunFacts {
  /** `hr_` and 12 hex characters. */
  id: string;
  vendor: VendorName;
  /** The directory the run works in. */
  cwd: string;
  status: RunStatus;
  createdAt: Date;
  /** `[node] name` of the node running it, if routed. */
  node?: string | null;
  /** Where the launch came from; `node` is the node that received it. */
  origin?: { node?: string };
}

/** Token counts a vendor reported for a run; `costUsd` only where the vendor reports it. */
export interface UsageJson {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens?: number;
  costUsd?: number;
  /**
   * The whole vendor session's totals as the CLI reported them, where they differ in kind from
   * the run's own (codex reports a resumed session's totals): the next resume's starting point.
   */
  session?: { inputTokens: number; cachedInputTokens: number; outputTokens: number; reasoningOutputTokens?: number };
}

/**
 * One tool call the vendor CLI denied (claude `result.permission_denials[]`, 2.1.332
 * `system/permission_denied`): the tool's name and its command, path or URL on one line, if any.
 */
export interface DenialJson {
  tool: string;
  detail?: string;
}

/** Live facts of a running run (a vendor stream reducer's `live` facts). */
export interface LiveFacts {
  /** The last command or tool the agent started, one line (e.g. `running npm test`). */
  step?: string;
  /** The last few steps (five), newest last. */
  recentSteps: string[];
  /**
   * Paths the agent changed through its edit tools (codex `file_change` items, claude
   * Write/Edit/MultiEdit/NotebookEdit), each once, in first-change order, at most
   * a thousand; a file a shell command wrote is not among them.
   */
  filesChanged: string[];
  /** Tokens (input + output) the CLI reported so far; codex reports them only when a turn ends. */
  tokens: number;
}

/**
 * Everything known about a finished run, as facts: what the harness reports, for the layer above
 * it to put into words (`outcomeText` in src/wording/runs.ts).
 */
export interface OutcomeFacts {
  /** `options.approve`: the run's tool calls were approved in the chat, which changes the denial advice. */
  run: Pick<RunFacts, 'id' | 'vendor' | 'cwd' | 'createdAt'> &
    Partial<Pick<RunFacts, 'node' | 'origin'>> & {
      options?: { approve?: boolean; verify?: VerifyPlanJson };
    };
  status: 'completed' | 'failed' | 'cancelled' | 'interrupted' | 'blocked';
  reason: string | null;
  endedAt: Date;
  /** With reason `quota_exhausted`: when the plan's limit resets (ISO 8601), if the CLI said. */
  quotaResetsAt?: string | undefined;
  /** The last agent message: the answer of a completed run, the last words of any other. */
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: UsageJson | null;
  /** Tool calls the CLI denied, in order. */
  denials?: readonly DenialJson[];
  /** A note on how the run ended, for the owner (the harness's exit classification). */
  note?: string | undefined;
  /** Last lines of stderr and notices, for failures. */
  diagnostics?: string;
  /** The exact command to resume by hand, or undefined when the run can't be resumed. */
  resumeCommand?: string | undefined;
  /** Processes that may outlive the run, in words; shown whatever the status. */
  processNote?: string | undefined;
  /** A cancel that first asked the agent to stop: whether it stopped by itself (`stopped`) or was killed. */
  stopAsked?: 'stopped' | 'killed' | undefined;
  /** Instruction files of the project left out of the run, one sentence each; shown whatever the status. */
  instructionsNote?: string | undefined;
  /** Event lines left out for their length and where their raw bytes are; shown whatever the status. */
  streamNote?: string | undefined;
  /**
   * The run's own git worktree: its branch and what changed in it, as `git diff
   * --shortstat` words plus new files; `changes` undefined when nothing changed.
   */
  worktree?: { branch: string; changes: string | undefined } | undefined;
  /** What the run changed in its git working tree; undefined when nothing, or not a checkout. */
  diff?: OutcomeDiff | undefined;
  /** How the owner's verification of a completed run ended; undefined when it had none. */
  verification?: VerificationJson | undefined;
}

/** A run's change, for its outcome message. */
export interface OutcomeDiff {
  /** `git diff --stat` lines (a few files and the summary line). */
  stat: string;
  /** The name of the patch file sent with the outcome (`hr_….patch`), when one is. */
  patchFilename?: string | undefined;
  /** Why no patch file is sent, in words, when none is. */
  patchMissing?: string | undefined;
  /** Files of the change left out of the patch (ignored before the run, or secret-looking), by path. */
  leftOut?: readonly LeftOutFile[] | undefined;
  /** The command that gives the whole change on the machine, when files were left out. */
  includeCommand?: string | undefined;
}

/** What the live status of a run shows; put into words by `statusText` in src/wording/runs.ts. */
export interface StatusFacts {
  /** `running` while the run works, else its terminal status. */
  status: 'running' | RunStatus;
  /** The terminal reason code, if any (`timeout`, `vendor_error`…). */
  reason?: string | null;
  /** Time since the run was launched, in ms. */
  elapsedMs: number;
  live?: LiveFacts | undefined;
  /** The run's final usage, once ended; while running the live token count is shown. */
  usage?: UsageJson | null;
  /** A `progress` run: the recent steps and the names of the changed files are listed too. */
  detail: boolean;
}

/**
 * Reason codes of a run's verification, stored in `runs.verify_reason`: `verified` (every command
 * exited 0), `verify_failed` (one exited non-zero or was killed), `verify_timeout` (its time
 * limit), `verify_output_limit` (it printed past 4× `max_run_artifact_mb`), `verify_not_run`
 * (it could not be started, or the run was stopped first: `why` says which).
 */
export const VERIFY_REASONS = [
  'verified',
  'verify_failed',
  'verify_timeout',
  'verify_output_limit',
  'verify_not_run',
] as const;

/** One of {@link VERIFY_REASONS}. */
export type VerifyReason = (typeof VERIFY_REASONS)[number];

/** What a run is verified with once its agent completed: the owner's commands, in order, and their time limit. */
export interface VerifyPlanJson {
  /** Shell commands (`/bin/sh -c`), run one after the other until one fails. */
  commands: string[];
  /** Time limit of all of them together, in minutes. */
  timeoutMinutes: number;
  /** Where the commands came from: the project's `verify` key, or the owner's `verify:` option. */
  source: 'config' | 'message';
}

/** How a run's verification ended, stored in `runs.verification` and shown in its outcome. */
export interface VerificationJson {
  reason: VerifyReason;
  /** The command that ended it: the last one for `verified`, the failing one otherwise. */
  command: string;
  /** How many of the plan's commands ran (the failing one included). */
  ran: number;
  /** The exit code of `command`; null when it was killed or never started. */
  exitCode: number | null;
  /** The signal that killed `command`, if one did. */
  signal?: string | null;
  /** Wall clock of the whole verification, in ms. */
  durationMs: number;
  /** The last lines of its output (stdout and stderr interleaved), for a failure. */
  tail?: string;
  /** Why it could not run, in words, for `verify_not_run`. */
  why?: string;
}

/** The verification ends a Fix press can hand to the agent (one that never ran has nothing to fix). */
export const FIXABLE_VERIFY_REASONS: ReadonlySet<VerifyReason> = new Set([
  'verify_failed',
  'verify_timeout',
  'verify_output_limit',
]);
