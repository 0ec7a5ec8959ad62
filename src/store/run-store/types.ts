/** The shapes the run repositories take and return. */
import type { RunId } from '../../core/ids.js';
import type { ButtonJson } from '../../core/buttons.js';
import type {
  DeliveryTargetJson,
  DocumentJson,
  QueuedLaunchJson,
  RunStatus,
  DenialJson,
  UsageJson,
  VerificationJson,
} from '../schema.js';

/** One raw inbound update for the inbox. */
export interface InboxEntry {
  /** The same key the channel's normalized message carries (Telegram: `botId:update_id`). */
  dedupeKey: string;
  receivedAt: Date;
  /** The platform's update as received (JSON). */
  payload: unknown;
}

/** Identifies the inbound event that asked for something. */
export interface InboundKey {
  platform: string;
  dedupeKey: string;
}

/** A message to write to the outbox. */
export interface NewDelivery {
  runId: RunId | null;
  /** What the message is, for listings: `started`, `outcome`, `notice`, `reply`. */
  kind: string;
  target: DeliveryTargetJson;
  body: string;
  /** How `body` is written: `markdown` is rendered per channel. @default `plain` */
  format?: 'plain' | 'markdown';
  /** Files sent after the text. @default none */
  documents?: DocumentJson[];
  /** Buttons under the message (its last part when split). @default none */
  buttons?: ButtonJson[];
}

/** Identifies a conversation: a chat, or a thread in it. */
export interface ConversationKey {
  platform: string;
  chatId: string;
  threadId?: string | undefined;
}

/** Where a queued run stands: the run it waits behind and how many must start before it. */
export interface QueuePlace {
  behind: string;
  ahead: number;
  /** The run waits for this time (a plan's reset, {@link QueuePolicy.notBefore}) as well. */
  notBefore?: Date;
}

/**
 * The `max_active` caps a start must respect: this node's (`[harness] max_active`, counting the
 * runs of the node) and, optionally, the fleet's (`[node] fleet_max_active`, counting every
 * active run in the database). A plain number is the node's cap alone.
 */
export type ActiveLimits = number | { node: number; fleet?: number | undefined };

/** How `LaunchesRepo.createRun` queues a run it cannot start now. */
export interface QueuePolicy {
  /** Most queued runs one conversation may have (`[harness] max_queued`). */
  maxQueued: number;
  /** What the run starts with once claimed. */
  launch: QueuedLaunchJson;
  /** Queue the run whatever the slots, to be claimed no earlier than this (a plan's reset). */
  notBefore?: Date;
}

/** The terminal facts of a run. */
export interface RunTerminal {
  status: Exclude<RunStatus, 'starting' | 'running' | 'queued'>;
  reason: string | null;
  finalMessage?: string | null;
  errorMessage?: string | null;
  usage?: UsageJson | null;
  /** Tool calls the CLI denied; stored as given, none when absent. */
  denials?: readonly DenialJson[];
  vendorSessionId?: string | null;
  exitCode?: number | null;
  exitSignal?: string | null;
  /** How the run's verification ended; absent or null when it had none. */
  verification?: VerificationJson | null;
  /** With reason `quota_exhausted`: when the plan's limit resets (ISO 8601), if the CLI said. */
  quotaResetsAt?: string | null;
  endedAt: Date;
}
