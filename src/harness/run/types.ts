/**
 * The shapes the supervisor and the steps of a run share: what the supervisor is given, and its
 * entry for one live run.
 */
import type { Clock } from '../../core/clock.js';
import type { RunId } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { Outbox } from '../../delivery/outbox.js';
import type { StatusEditor } from '../../delivery/status-editor.js';
import type { RunStore } from '../../store/runs-repo.js';
import type { RunRow } from '../../store/schema.js';
import type { StatusFacts } from '../../types/run-facts.js';
import type { DescribeOutcome, ExitFacts } from '../outcome.js';
import type { CodexLoginMissing, HarnessWords } from '../ports.js';
import type { CgroupSupport } from '../run-cgroup.js';
import type { BaseEnv } from '../spawn-env.js';
import type { TerminalWritePolicy } from '../terminal-write.js';
import type { Tracer } from '../traces.js';
import type { SessionIo, Vendor, VendorHomes, VendorName, VendorSession } from '../vendors/types.js';

/** A vendor CLI found on PATH at start. */
export interface InstalledVendor {
  vendor: Vendor;
  /** Absolute path of the executable, resolved once at start. */
  binaryPath: string;
  version: string;
}

/** Limits of one run. */
export interface RunLimits {
  /** Longest vendor event line, in bytes. */
  maxEventBytes: number;
  /** Malformed lines tolerated before the run is killed as `failed/protocol`. */
  maxFramingErrors: number;
  /** Wait between SIGINT and SIGKILL when stopping a run, in ms. */
  killGraceMs: number;
  /** Cap of `events.jsonl`, in bytes; output past 4× this kills the run. */
  maxRunArtifactBytes: number;
  /** Advisory notice when no vendor event arrived after this many ms. */
  firstEventMs: number;
  /** Advisory notice after this many ms of silence. */
  inactivityMs: number;
  /**
   * How long the CLI may take to exit after its terminal event, in ms; then it is stopped and the
   * run judged from that event. Any later event restarts the wait: claude can
   * start another turn after a `result`.
   */
  finishGraceMs: number;
  /**
   * How long stdout and stderr are still read after the CLI has exited, in ms; a descendant that
   * inherited them may hold them open, and is stopped after this.
   */
  exitDrainMs: number;
  /** Largest `hr_….patch` sent with an outcome, in bytes; over it only the stat is sent. */
  maxPatchBytes: number;
  /** Share of a plan window, in percent, at which the owner is warned once per period. @default 80 */
  quotaWarnPercent?: number;
}

/** Dependencies of the {@link RunSupervisor}. */
export interface SupervisorDeps {
  store: RunStore;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  homes: VendorHomes;
  baseEnv: BaseEnv;
  /** `$BATON_HOME/harness/runs`. */
  runsDir: string;
  limits: RunLimits;
  /** `host:pid` of this service process, stored on every run it supervises. */
  supervisorId: string;
  /** How often to look for cancel requests from other processes, in ms. @default 1_000 */
  cancelPollMs?: number;
  /** Puts a finished run's facts into its outcome message (the chat layer's words). */
  describeOutcome: DescribeOutcome;
  /** The sentences of the notices and outcome parts the supervisor posts (the wording's). */
  words: HarnessWords;
  /**
   * Whether codex has no login in its home (the doctor's file check): a retry notice then says
   * so. @default none: retry notices say nothing about the login
   */
  codexLoginMissing?: CodexLoginMissing;
  /** Lifecycle traces. @default none */
  tracer?: Tracer;
  /** Where run cgroups are made (`detectCgroupSupport()` at start). @default none: runs are followed by their process tree */
  cgroups?: CgroupSupport;
  /**
   * How to start the per-run permission-prompt server of a run that asks for approvals: the command, its arguments and environment, written to the run's 0600 `mcp.json`.
   * @default none: such a run fails at launch with `approvals_unavailable`
   */
  approvalServer?: (runId: string, token: string) => { command: string; args: string[]; env: Record<string, string> };
  /**
   * Tool approvals of a run driven as a session (codex app-server) that asks for them: each ask
   * becomes an approval card, answered by the owner's press or the timeout.
   * @default none: such a run fails at launch with `approvals_unavailable`
   */
  sessionApprovals?: (run: RunRow) => NonNullable<SessionIo['approvals']>;
  /** Told once a run's end is in the database (closes its open tool approvals). @default none */
  onRunEnded?: (runId: RunId) => Promise<void>;
  /** Backoff of the run-end write while the database is away. @default TERMINAL_WRITE_POLICY */
  terminalWrite?: TerminalWritePolicy;
  /**
   * The live status: the run's `started` message edited in place, and the
   * words of its status lines. @default none: no edits, and `progress` runs post milestone notices
   */
  status?: { editor: StatusEditor; describe: (facts: StatusFacts) => string };
}

/** Why the supervisor stops a run: the exit facts a stop adds. */
export type StopReason = Partial<
  Pick<ExitFacts, 'cancelledBy' | 'killedFor' | 'timedOut' | 'shutdown' | 'stoppedAfterTerminal' | 'startUnrecorded'>
>;

/** The supervisor's entry for one run it supervises, from {@link RunSupervisor.start} to its end. */
export interface ActiveRun {
  runId: RunId;
  pid: number | undefined;
  /** Set by a stop that arrived before the spawn: the launch honours it there and spawns nothing. */
  stopBeforeSpawn?: StopReason;
  /** Stops the run's processes (with the kill grace), adding `why` to its exit facts while it still works. */
  stop: (why: StopReason) => Promise<void>;
  /** Resolves once the run's end is recorded or given up. */
  done: Promise<void>;
  /** Set once the run's end is in the database: its status, or `already_ended` when it was not active any more. */
  ended?: RunRow['status'] | 'already_ended';
  /** The CLI's live session, for a vendor driven as one (codex app-server): steer and interrupt its turn. */
  session?: VendorSession;
  /** Moves the wall-clock deadline (set once the CLI runs): @returns the new limit in ms, or undefined when already at the cap. */
  extend?: (addMs: number) => number | undefined;
  /**
   * Adds a user message to the running turn (set at the spawn when the CLI takes more messages
   * on stdin): `added`, or `ended` when the run's last turn had ended (or it is being stopped).
   */
  steer?: (text: string) => Promise<'added' | 'ended'>;
}

/** Longest wall clock of a run, also after "+30 min" presses, in ms (240 minutes). */
export const MAX_RUN_WALL_CLOCK_MS = 240 * 60_000;
