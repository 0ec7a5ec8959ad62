/** The shapes tool approvals exchange: one request from claude, its answer, and the broker's dependencies. */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import type { ApprovalDecision, ApprovalStore } from '../store/approvals-repo.js';
import type { RunStore } from '../store/runs-repo.js';
import type { ApprovalWords } from './ports.js';

/** One permission request, as the permission-prompt server forwards it from claude. */
export interface ApprovalRequest {
  runId: string;
  /** claude's `tool_use_id`. */
  requestId: string;
  /** claude's `tool_name`, e.g. `Bash`, `Write`, `Edit`, `mcp__srv__tool`. */
  tool: string;
  /** claude's `input`: the tool call's arguments as the model wrote them. */
  input: Record<string, unknown>;
}

/**
 * The answer to one ask: `pending` (ask again), or the decision in the words claude's
 * permission-prompt tool must return (`behavior` `allow` | `deny`, see the claude vendor module).
 */
export type ApprovalAnswer =
  | { state: 'pending' }
  | { state: 'decided'; decision: ApprovalDecision; behavior: 'allow' | 'deny'; message: string };

/** Dependencies of the {@link ApprovalBroker}. */
export interface ApprovalBrokerDeps {
  approvals: ApprovalStore;
  store: RunStore;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  /** `approval_timeout_minutes`, in ms. */
  timeoutMs: number;
  /** Longest single wait of one ask before it answers `pending`, in ms. @default 20_000 */
  longPollMs?: number;
  /** How often a waiting ask looks at the database, in ms. @default 500 */
  pollMs?: number;
  /**
   * Where run directories live (`<runsDir>/<run id>`): the whole input of a call too long for one
   * message is written there as `approval-<id>.txt` (0600) and sent as a file. @default none (cut only)
   */
  runsDir?: string;
  /**
   * Longest text of one message on a platform, in UTF-16 code units (the adapter's
   * `maxMessageLength`), or undefined when the platform is not connected. @default none (`MAX_APPROVAL_INPUT_CHARS` only)
   */
  maxMessageLength?: (platform: string) => number | undefined;
  /** The home directory of the user baton runs as: `~` in commands, and its dotfiles always ask. */
  homeDir: string;
  /** `$BATON_HOME` and the CLI homes: writes there always ask, marked "baton's own files". */
  protectedDirs: readonly string[];
  /** The approval message's sentences, the `[run …]` tag that starts it among them. */
  words: ApprovalWords;
}
