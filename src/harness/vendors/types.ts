/**
 * The vendor port: everything baton knows about one coding CLI lives behind this interface, so no
 * flag or event name of a vendor leaks into the dispatcher or the run supervisor.
 */
import type { VendorName } from '../../core/vendor-name.js';
import type { DenialJson, UsageJson } from '../../store/schema.js';
import type { SniffedEvent } from '../json-lines.js';
import type { LiveFacts } from './live.js';
import type { QuotaFacts } from './quota.js';
import type { TranscriptReader } from './transcript.js';

export type { VendorName };

/**
 * What deciding code (the launch gates, the command parser) may know of a vendor's CLI without
 * importing its module, so that it never compares vendor names.
 */
export interface VendorFacts {
  /** The CLI can hand permission prompts to baton (claude's `--permission-prompt-tool`): a run may ask for tool approvals. */
  readonly toolApprovals: boolean;
  /** Postures that make the CLI ask before a tool call, so a run in one asks for tool approvals. */
  readonly askingPostures: readonly string[];
  /** The CLI takes a dollar budget (claude `--max-budget-usd`). */
  readonly budgetCap: boolean;
  /** The CLI takes a turn limit (claude `--max-turns`). */
  readonly turnCap: boolean;
  /** The postures baton passes on. */
  readonly postures: readonly string[];
  /** What the chat option naming a posture is called: codex's `sandbox:`, claude's `mode:`. */
  readonly postureWord: 'sandbox' | 'mode';
  /** The command that installs the CLI (npm packages `@openai/codex`, `@anthropic-ai/claude-code`). */
  readonly install: string;
}

/** Each vendor's {@link VendorFacts}. */
export const VENDOR_FACTS: Readonly<Record<VendorName, VendorFacts>> = {
  codex: {
    // Through `codex app-server` (`[harness] codex_transport`); a run under `exec` that asks for
    // approvals is refused at launch (`approvals_unavailable`).
    toolApprovals: true,
    askingPostures: [],
    budgetCap: false,
    turnCap: false,
    postures: ['read-only', 'workspace-write'],
    postureWord: 'sandbox',
    install: 'npm i -g @openai/codex',
  },
  claude: {
    toolApprovals: true,
    askingPostures: ['default', 'manual'],
    budgetCap: true,
    turnCap: true,
    // claude 2.1.332 lists `manual` where 2.1.197 lists `default`; both are accepted (the vendor maps them).
    postures: ['default', 'manual', 'acceptEdits', 'auto', 'dontAsk', 'plan'],
    postureWord: 'mode',
    install: 'npm i -g @anthropic-ai/claude-code',
  },
};

/**
 * Why a vendor's terminal event says the run failed, where the vendor names a cause of its own:
 * `max_turns` (claude `error_max_turns`), `budget_exceeded` (claude `error_max_budget_usd`),
 * `quota_exhausted` (the plan's usage limit, see quota.ts). Any other failure is `vendor_error`.
 */
export type VendorFailureReason = 'vendor_error' | 'max_turns' | 'budget_exceeded' | 'quota_exhausted';

/** What the owner asked for, in vendor-neutral terms. */
export interface LaunchRequest {
  prompt: string;
  model?: string;
  /** codex sandbox (`read-only` | `workspace-write`); claude permission mode. Absent: the user's own config applies. */
  posture?: string;
  /** Resume this vendor session instead of starting a new one. */
  resumeSessionId?: string;
  /**
   * The run's approval token: tool calls the permission mode would ask about go to the
   * owner in the chat. Only for vendors with {@link Vendor.supportsApprovals}.
   */
  approvalToken?: string;
  /** Set by the supervisor: the run's 0600 MCP config that starts the permission-prompt server. */
  approvalMcpConfig?: string;
  /** Images the model sees as images, stored in the run directory. */
  images?: readonly { path: string; mediaType: string }[];
  /** Most US dollars the run may spend, for a CLI with its own budget flag (claude `--max-budget-usd`). */
  maxBudgetUsd?: number;
  /** Most agent turns, for a CLI with its own turn flag (claude `--max-turns`). */
  maxTurns?: number;
  /**
   * Set by the supervisor: the run's 0600 file holding the project's instruction files
   * ({@link Vendor.instructionFiles}) as baton read them, for the CLI to take as instructions.
   */
  instructionsFile?: string;
  /** With {@link resumeSessionId}: the session's usage before this run (see {@link ReducerContext}). */
  sessionUsageBefore?: UsageJson;
}

/** What a reducer must know of the run before its first event. */
export interface ReducerContext {
  /** A resumed session's usage when the run began (its parent's), for a CLI that reports session totals. */
  sessionUsageBefore?: UsageJson;
}

/** Where a run happens, for flags that depend on it. */
export interface LaunchContext {
  /** Absolute, resolved working directory of the run (inside a workspace root). */
  cwd: string;
}

/** Facts a vendor's stream reducer has gathered so far. */
export interface StreamFacts {
  sessionId?: string;
  /** The last agent message, the run's answer. */
  finalMessage?: string;
  /** Summed over every terminal event of the run (claude prints one `result` per turn it ends). */
  usage?: UsageJson;
  /** Why the CLI's usage figures were not counted (negative, fractional, past a safe integer); `usage` is then absent. */
  usageInvalid?: string;
  /**
   * Set only by the vendor's terminal event; a later terminal event replaces an
   * earlier one: the run is judged by its last. `reason` absent means `vendor_error`.
   */
  terminal?: { kind: 'completed' } | { kind: 'failed'; message: string; reason?: VendorFailureReason };
  /** Tool calls the CLI denied, in order, each once (claude only). */
  denials?: DenialJson[];
  /** The vendor's own words from its last error line (codex `error`), for a run that ends without a terminal event. */
  lastError?: string;
  /** Non-fatal warnings and retry announcements, newest last (bounded). */
  notices: string[];
  eventCount: number;
  /** What the run is doing now, for its live status message; absent before any step or usage. */
  live?: LiveFacts;
  /** What the stream said about the plan's usage limit; absent when it said nothing. */
  quota?: QuotaFacts;
}

/** Folds a vendor's JSON events into {@link StreamFacts}. */
export interface StreamReducer {
  push(event: unknown): void;
  facts(): StreamFacts;
  /**
   * Whether the reducer needs an event of this kind (sniffed from the raw line, see
   * `sniffEvent` in json-lines.ts); false lets the stream spool the line without parsing it and
   * call {@link StreamReducer.skipped} instead of `push`. Absent: every line is parsed.
   */
  reads?(event: SniffedEvent): boolean;
  /** Counts an event the stream spooled without a parse (it still counts in `eventCount`). */
  skipped?(event: SniffedEvent): void;
}

/** Where the vendor's own config and login live, resolved config → env → vendor default. */
export interface VendorHomes {
  codexHome: string;
  claudeConfigDir: string;
}

/** How a CLI takes further user messages on its stdin; see {@link Vendor.stdinTurns}. */
export interface StdinTurns {
  /** One more user message with `text`, as the CLI reads it on stdin (with its line end). */
  message(text: string): string;
  /**
   * The request that asks the CLI to stop its turn and end (claude's `interrupt` control
   * request), with `requestId` as its id, as the CLI reads it on stdin (with its line end).
   */
  interrupt(requestId: string): string;
  /** Whether `event` begins a turn (claude: its `system/init`, printed again at each turn). */
  turnStarted(event: unknown): boolean;
  /** Whether `event` ends a turn (claude: its `result`). */
  turnEnded(event: unknown): boolean;
}

/** One coding CLI. */
export interface Vendor {
  readonly name: VendorName;
  /** Executable name looked up on PATH. */
  readonly binaryName: string;
  /**
   * argv after the executable (the CLI's flags, see docs/vendors/). The argv also pins what a file inside
   * the repository must not change (posture, settings sources): a repository is untrusted input.
   * It never holds the task: the task goes on stdin ({@link Vendor.stdinPayload}), so it is not in
   * `ps` and the CLI can start before it has it.
   */
  buildArgv(request: LaunchRequest, context: LaunchContext): string[];
  /** Most characters (Unicode code points) the CLI accepts as a prompt on stdin; absent: no known limit. */
  readonly maxStdinPromptChars?: number;
  /**
   * The task as the CLI reads it on stdin. The supervisor spawns the CLI with a stdin pipe, takes
   * the launch snapshot of the working tree while the CLI starts, then writes this and closes
   * stdin (an open stdin hangs codex). The CLI must do nothing to the working tree and call no
   * model before this arrives (measured per vendor, see its TSDoc).
   *
   * @throws Error when an image of the request cannot be read.
   */
  stdinPayload(request: LaunchRequest): Promise<string>;
  /**
   * Files of a project (relative to each directory from the checkout's top down to the run's
   * directory) that hold its instructions for the agent, which the CLI is kept from reading
   * itself because it reads them together with the project's settings. baton reads them
   * (bounded, inside the checkout only) and passes them in {@link LaunchRequest.instructionsFile}.
   * Absent: the CLI reads the project's instructions itself (codex's `AGENTS.md`).
   */
  readonly instructionFiles?: readonly string[];
  /** The CLI can hand permission prompts to baton (claude's `--permission-prompt-tool`). */
  readonly supportsApprovals?: boolean;
  /**
   * The CLI reads more user messages on its stdin while it runs (claude's stream-json input):
   * stdin then stays open after the task, each message is one more turn, and stdin is closed once
   * the last turn ended. Absent: stdin is closed after the task and a run cannot be steered.
   */
  readonly stdinTurns?: StdinTurns;
  /** Vendor-declared environment entries for the child (e.g. `CODEX_HOME`). */
  vendorEnv(homes: VendorHomes): Record<string, string>;
  newReducer(context?: ReducerContext): StreamReducer;
  /** The transcript steps of one stored event (a run page's transcript); absent: the page shows none. */
  transcript?: TranscriptReader;
  /** A one-line milestone for `progress` runs (a command started, files changed), or undefined. */
  describeProgress?(event: unknown): string | undefined;
  /**
   * The CLI's own words when `event` says it is retrying the model (no network, an overloaded
   * API), or undefined. The owner is told once per run, so a run that only retries is not silent.
   */
  describeRetry?(event: unknown): string | undefined;
  /**
   * The CLI's own words when `event` (or, with `stderr`, a chunk of its stderr) says the model
   * server refused its credentials — HTTP 401, not logged in — or undefined. No retry can help:
   * the supervisor ends the run at once as failed/`not_logged_in` with {@link Vendor.loginFix}.
   */
  describeAuthFailure?(source: { event: unknown } | { stderr: string }): string | undefined;
  /** How to log this CLI in for the home runs use (`home`: its CODEX_HOME / CLAUDE_CONFIG_DIR), in one sentence. */
  loginFix?(home: string): string;
  /** The exact command a person runs to resume `sessionId` by hand. */
  resumeCommand(cwd: string, sessionId: string): string;
  /**
   * For a CLI driven as a session over its stdio (codex app-server): opens it on the spawned
   * child. The spawn step then hands the task to {@link VendorSession.sendTask} instead of
   * writing it to stdin and closing stdin, and the output step hands every parsed stdout line to
   * {@link VendorSession.receive}. Absent: the task goes on stdin, then EOF.
   */
  openSession?(io: SessionIo): VendorSession;
}

/** A request the CLI sends to baton over its session (an approval, a question). */
export interface SessionRequest {
  id: number | string;
  method: string;
  params: unknown;
}

/** What a {@link Vendor.openSession} session is given. */
export interface SessionIo {
  request: LaunchRequest;
  /** The run's working directory (absolute, resolved). */
  cwd: string;
  /** Writes to the CLI's stdin. */
  write(text: string): void;
  /** Closes the CLI's stdin. */
  end(): void;
  /** A session step failed (logged; the stream carries the CLI's own answer). */
  onError(err: unknown): void;
  /**
   * Tool approvals for a run that asks for them: the CLI asks before acting, and each ask
   * waits for the owner's verdict (true: allow). Absent: the CLI never asks, and a request to
   * approve is refused.
   */
  approvals?: { ask(ask: ToolApprovalAsk): Promise<boolean> };
}

/** One tool call a session CLI asks about, in the terms of baton's approval cards. */
export interface ToolApprovalAsk {
  /** Unique within the run. */
  requestId: string;
  /** `Bash`, `ApplyPatch` or `Permissions` for codex (see approval-scope.ts). */
  tool: string;
  input: Record<string, unknown>;
}

/** A live session with the CLI (see {@link Vendor.openSession}). */
export interface VendorSession {
  /** Sends the task: the CLI may act and call its model from now on. */
  sendTask(task: string): void;
  /** Reads one parsed line of the CLI's stdout. */
  receive(message: unknown): void;
  /** The CLI's stdout ended. */
  closed(): void;
  /** Adds words to the running turn. @throws Error when no turn runs or the CLI refuses. */
  steer(text: string): Promise<void>;
  /** Asks the CLI to stop the running turn. @throws Error when no turn runs or the CLI refuses. */
  interrupt(): Promise<void>;
}
