/**
 * What the dispatcher is given ({@link DispatcherDeps}) and what it answers ({@link DispatchResult}):
 * the types every part of dispatch/ shares, kept apart from the Dispatcher so that its parts can
 * name them without importing it.
 */
import type { BatonConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { ErrorCode } from '../core/errors.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { VendorName } from '../core/vendor-name.js';
import type { Outbox } from '../delivery/outbox.js';
import type { PressSettler } from '../delivery/settle-press.js';
import type { NodeView } from '../fleet/nodes.js';
import type { ApprovalBroker } from '../harness/approvals.js';
import type { InstalledVendor, RunSupervisor } from '../harness/supervisor.js';
import type { PressClaims } from '../store/press-claims.js';
import type { RunStore } from '../store/runs-repo.js';
import type { VoiceConfig } from '../config/index.js';
import type { VoiceAudio } from './inbound/voice-notes.js';
import type { ScheduleStore } from '../store/schedules-repo.js';

/** Dependencies of the Dispatcher (dispatcher.ts). */
export interface DispatcherDeps {
  config: BatonConfig;
  store: RunStore;
  outbox: Outbox;
  supervisor: RunSupervisor;
  clock: Clock;
  logger: Logger;
  /** Vendor CLIs found on PATH at start. */
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  homeDir: string;
  /** `$BATON_HOME/harness/runs`, measured by the storage gate. */
  /** Directories no run may contain or lie in (`$BATON_HOME`, the CLI homes). @default none */
  protectedDirs?: readonly string[];
  runsDir: string;
  /** Tool approvals of claude runs. @default none: `approve` and mode:default launch without them */
  approvals?: ApprovalBroker;
  /** Claims on pressed messages: a Resume acts once per message. @default none: no claim (tests of other parts) */
  pressClaims?: PressClaims;
  /** Replaces a decided card's buttons with the decision. @default none: buttons stay */
  pressSettler?: Pick<PressSettler, 'settle'>;
  /** Schedules (`/every`, `/at`, `/schedules`). @default none: the schedule commands answer as unknown */
  schedules?: ScheduleStore;
  /** `$BATON_HOME/worktrees`, where runs get their own git worktree; unset: no run can ask for one. */
  worktreesDir?: string;
  /** The doctor table, for `/doctor`. */
  doctor?: () => Promise<string>;
  /** One line per node of the fleet sharing this database, for `/runs`. @default none */
  nodes?: () => Promise<string[]>;
  /**
   * This node of the fleet: its name and the `nodes` table. With it, a launch
   * whose target is on another node is routed there, and queued runs are claimed by node name.
   * @default none: every launch runs here (`baton ask`, tests)
   */
  fleet?: {
    name: string;
    list(): Promise<NodeView[]>;
    /**
     * This process's start of the node (`nodes.instance`): the runs it queues are addressed to
     * it, and it claims only runs addressed to it (or to an instance that is gone).
     * @default none: runs are addressed and claimed by name alone
     */
    readonly instance?: string | undefined;
  };
  newRunId?: () => RunId;
  /**
   * True where the config is read anew for every command (`baton ask`): a refusal's fix then
   * applies at once, so its ", then restart" is left out. @default false (the service)
   */
  configPerCommand?: boolean;
  /**
   * Which queued runs this process may start. `all` (the service): any run queued on this host
   * or node. `own`: only the runs this process queued and waits for, named by
   * `Dispatcher.waitFor` — a short-lived process (`baton ask`) must not start a run it will not
   * be there to see through. @default 'all'
   */
  queueScope?: 'all' | 'own';
  /**
   * The service's config as it stands now (see src/config/live.ts): refreshed from config.toml
   * before each command, so `baton approve` and `baton grant path` apply without a restart.
   * @default none: `config` as given, for good
   */
  liveConfig?: { refresh(): Promise<void>; readonly current: BatonConfig };
  /**
   * How to restart this service, in words; a refusal whose fix needs a restart says it
   * ("…, then restart baton (HOW).") so the user is never left guessing. @default none
   */
  restartHow?: string;
  /**
   * Transcribes a voice note's audio under `[voice]` (the service: src/channels/transcribe.ts, with
   * the key `key_env` names). @default none: voice notes are answered that they are off
   * @throws BatonError `voice_failed` with the reason.
   */
  transcribe?: (audio: VoiceAudio, voice: VoiceConfig, signal: AbortSignal) => Promise<string>;
}

/** What `Dispatcher.handle` did with a message, for callers and tests. */
export type DispatchResult =
  | { kind: 'ignored' }
  | { kind: 'duplicate' }
  | { kind: 'answered' }
  | { kind: 'refused'; code: ErrorCode }
  | { kind: 'launched'; runId: RunId }
  /** Answered for now; its inbound event stays claimed until a later launch records it. */
  | { kind: 'deferred' };

/** The answer of a command that only replied. */
export const ANSWERED: DispatchResult = { kind: 'answered' };
