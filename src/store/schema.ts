/**
 * The drizzle schema: one definition for PostgreSQL (postgres.js) and embedded PGlite. SQL
 * migrations under `migrations/` are generated from this file by `npm run db:generate`.
 */
import type { ButtonJson } from '../core/buttons.js';
import { VENDOR_NAMES } from '../core/vendor-name.js';
import { sql } from 'drizzle-orm';
import {
  bigserial,
  boolean,
  index,
  integer,
  json,
  jsonb,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { DenialJson, UsageJson } from '../types/run-facts.js';

export type { DenialJson, UsageJson } from '../types/run-facts.js';

/**
 * Run statuses: `starting` and `running` are active, `queued` waits for its
 * worktree or a `max_active` slot, the rest terminal.
 */
export const runStatusEnum = pgEnum('run_status', [
  'starting',
  'running',
  'completed',
  'failed',
  'blocked',
  'cancelled',
  'interrupted',
  'queued',
]);

/** Vendors baton can drive. */
export const vendorEnum = pgEnum('vendor', VENDOR_NAMES);

/** Outbox row states: `dead` rows are kept, listed, never sent. */
export const deliveryStatusEnum = pgEnum('delivery_status', ['pending', 'delivered', 'dead']);
/**
 * How a delivery's body is written: `plain` text shown exactly as written, or `markdown` that each
 * channel renders in its own format (Telegram HTML, Slack mrkdwn, Discord Markdown).
 */
export const bodyFormatEnum = pgEnum('body_format', ['plain', 'markdown']);

/** Where a request came from, frozen at launch. */
export interface OriginJson {
  platform: string;
  chatId: string;
  threadId?: string;
  senderId: string;
  messageId: string;
  /** `[node] name` of the node that received the launch; absent on older runs. */
  node?: string;
}

/** Per-run options the owner asked for. */
export interface RunOptionsJson {
  model?: string;
  sandbox?: string;
  /** The owner approves tool calls from the chat (claude only). */
  approve?: boolean;
  timeoutMinutes: number;
  progress: boolean;
  /** `budget:USD` or `[harness] default_budget_usd` (claude `--max-budget-usd`), US dollars. */
  budgetUsd?: number;
  /** `turns:N` or `[harness] default_max_turns` (claude `--max-turns`). */
  maxTurns?: number;
  /** `tokens:N` or `[harness] default_max_tokens`: input + output tokens, enforced by baton from the CLI's usage. */
  maxTokens?: number;
}

/**
 * What a queued run launches with once its slot frees: the vendor-neutral request
 * and the wall clock, in ms. Paths are the run directory's own files.
 */
export interface QueuedLaunchJson {
  prompt: string;
  images?: { path: string; mediaType: string }[];
  model?: string;
  posture?: string;
  resumeSessionId?: string;
  maxBudgetUsd?: number;
  maxTurns?: number;
  /** A resume's session usage before it (see LaunchRequest.sessionUsageBefore). */
  sessionUsageBefore?: UsageJson;
  timeoutMs: number;
  /**
   * Set while a run routed to another node waits for that node to prepare it:
   * the target as the owner sent it (`in:` path on the owning node, `~` its home), and whether the
   * run asked for a worktree. The owning node resolves it against its own roots, makes the
   * worktree, fills in `cwd`/`worktree_root` and drops this before claiming the run.
   */
  route?: { target: string; worktree: boolean };
}

/** One re-split of a delivery: from part `fromPart` (0-based) on, parts of at most `maxLength` UTF-16 units. */
export interface ReshapeJson {
  fromPart: number;
  maxLength: number;
}

/**
 * A file sent with a delivery: its bytes are on disk in the run directory (0600), so
 * a row that waits across a restart still has them.
 * - `long_body`: the delivery's whole body as a file (`result.md`). Used only when the body would
 *   take more than {@link LONG_BODY_PARTS} messages on the platform: then the first part goes as
 *   text, then this file, instead of the other parts.
 * - `always`: sent after the text (a run's `hr_….patch`).
 * `refused` is set once the platform refused the file for good (or it is gone from disk): a
 * `long_body` file then falls back to the remaining text parts, an `always` file is skipped.
 */
export interface DocumentJson {
  /** Absolute path of the file. */
  path: string;
  /** The name the platform shows, e.g. `result.md`, `hr_0123456789ab.patch`. */
  filename: string;
  use: 'long_body' | 'always';
  /** A short text sent with the file (Telegram caption, Slack initial comment, Discord content). */
  caption?: string;
  refused?: boolean;
}

/** Messages a body may take before it goes as its first part plus `result.md` (about three chat messages). */
export const LONG_BODY_PARTS = 3;

/** Where a delivery goes: a chat, optionally a thread, optionally as a reply. */
export interface DeliveryTargetJson {
  platform: string;
  chatId: string;
  threadId?: string;
  replyToMessageId?: string;
}

export const runs = pgTable(
  'runs',
  {
    id: text('id').primaryKey(),
    parentRunId: text('parent_run_id'),
    vendor: vendorEnum('vendor').notNull(),
    status: runStatusEnum('status').notNull(),
    reason: text('reason'),
    task: text('task').notNull(),
    cwd: text('cwd').notNull(),
    worktreeRoot: text('worktree_root').notNull(),
    /**
     * The branch of the git worktree baton made for this run (`baton/<run id>`), whose
     * directory is `worktree_root`; null for a run in the checkout itself.
     */
    branch: text('branch'),
    /** Top of the checkout the run's worktree was added from (where `git worktree` is run); null without a worktree. */
    sourceRoot: text('source_root'),
    /**
     * When baton removed the run's worktree, or found it gone and cleared it from the list
     * (`baton worktrees prune`); null while it exists or for a run without a worktree.
     */
    worktreeRemovedAt: timestamp('worktree_removed_at', { withTimezone: true, mode: 'date' }),
    /** The launch a `queued` run starts with; null once it started (and for runs never queued). */
    launch: jsonb('launch').$type<QueuedLaunchJson>(),
    options: jsonb('options').$type<RunOptionsJson>().notNull(),
    origin: jsonb('origin').$type<OriginJson>().notNull(),
    vendorSessionId: text('vendor_session_id'),
    finalMessage: text('final_message'),
    errorMessage: text('error_message'),
    usage: jsonb('usage').$type<UsageJson>(),
    /** Tool calls the CLI denied during the run; empty when none. */
    denials: jsonb('denials').$type<DenialJson[]>().notNull().default([]),
    exitCode: integer('exit_code'),
    exitSignal: text('exit_signal'),
    pid: integer('pid'),
    /**
     * SHA-256 (hex) of the run's approval token: the per-run permission-prompt server
     * proves with it that it asks about this run only. Null for runs that do not ask.
     */
    approvalTokenSha256: text('approval_token_sha256'),
    /** Set by a cancel from another process (`/cancel`, `/stop`, `baton cancel`): the reason code. */
    cancelRequested: text('cancel_requested'),
    /** `events.jsonl` reached `max_run_artifact_mb` and spooling stopped; the run continued. */
    artifactTruncated: boolean('artifact_truncated').notNull().default(false),
    /** `host:pid` of the service process supervising the run, so a restart knows which runs it orphaned. */
    supervisor: text('supervisor').notNull(),
    /**
     * `[node] name` of the node that runs it: the receiving node for a local
     * launch, the node holding the repository for a routed one. `max_active` counts per node, and
     * only that node claims the run when it is queued. Null on runs from before routing.
     */
    node: text('node'),
    /**
     * The node instance (`nodes.instance`, one per start of a process) the run is addressed to:
     * of the processes named `node`, only that one claims the run while it has a row in `nodes`;
     * once that instance is gone, the next process of the same name takes the run over. Null on
     * runs from before instances were addressed (claimed by name alone).
     */
    nodeInstance: text('node_instance'),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    // The lock domain: at most one active run per worktree root, enforced
    // by the database so two launches racing from two processes can never both pass.
    uniqueIndex('runs_one_active_per_worktree').on(t.worktreeRoot).where(sql`${t.status} in ('starting', 'running')`),
    index('runs_created_at').on(t.createdAt),
    index('runs_active').on(t.status).where(sql`${t.status} in ('starting', 'running')`),
    // What a launch reads under the launch lock, and what a run's end looks for: the
    // active and queued runs, oldest first. Without it both scanned every run ever made (9 ms at
    // 50,000 runs on the bench machine, growing with the table). Not partial: a predicate naming
    // `queued` cannot be created in the transaction that runs every migration of a fresh database
    // (the enum value comes from 0006; PostgreSQL 55P04), and a full index serves a generic plan
    // with the statuses bound as parameters as well.
    index('runs_status').on(t.status, t.createdAt),
  ],
);

export const deliveries = pgTable(
  'deliveries',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id').references(() => runs.id, { onDelete: 'set null' }),
    kind: text('kind').notNull(),
    target: jsonb('target').$type<DeliveryTargetJson>().notNull(),
    body: text('body').notNull(),
    /** How `body` is written; rows from before formatting are plain. */
    format: bodyFormatEnum('format').notNull().default('plain'),
    status: deliveryStatusEnum('status').notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** How many split parts have reached the platform, so a retry resumes after them. */
    partsDelivered: integer('parts_delivered').notNull().default(0),
    /**
     * Re-splits after the platform refused a part as too long, in order: from part `fromPart` on,
     * parts are at most `maxLength`. Kept so a retry lays the message out exactly as before.
     */
    reshapes: jsonb('reshapes').$type<ReshapeJson[]>().notNull().default([]),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }).notNull(),
    lastError: text('last_error'),
    platformMessageIds: jsonb('platform_message_ids').$type<string[]>().notNull().default([]),
    /** Files sent with the message, after its text (see {@link DocumentJson}); empty for most rows. */
    documents: jsonb('documents').$type<DocumentJson[]>().notNull().default([]),
    /** Buttons under the message's last part; null for none. */
    buttons: jsonb('buttons').$type<ButtonJson[]>(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    deliveredAt: timestamp('delivered_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    index('deliveries_due').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('deliveries_run').on(t.runId),
  ],
);

/**
 * Inbox states: `received` (the raw update is stored, nobody handles it yet), `claimed` (a
 * service process, `claimed_by`, is handling it), `handled` (acted on; never again). The default
 * is `handled` so rows written before the inbox existed are never replayed.
 */
export const inboundStateEnum = pgEnum('inbound_state', ['received', 'claimed', 'handled']);

/**
 * The inbox: inbound events by platform and dedupe key. A channel that polls (Telegram) stores
 * each raw update here before its poll offset moves past it; every message is claimed here before
 * anything is acted on, so the dedupe key also guarantees no second run.
 */
export const inboundEvents = pgTable(
  'inbound_events',
  {
    platform: text('platform').notNull(),
    dedupeKey: text('dedupe_key').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull(),
    state: inboundStateEnum('state').notNull().default('handled'),
    /** `host:pid` of the service process handling a `claimed` event. */
    claimedBy: text('claimed_by'),
    /**
     * The platform's raw update while it is not yet handled (cleared once handled). `json`, not
     * `jsonb`: jsonb refuses `\u0000`, so a message holding a NUL would fail its own save and
     * block the poll behind it; json keeps the text as sent (the dispatcher then refuses it).
     */
    payload: json('payload'),
  },
  (t) => [
    primaryKey({ columns: [t.platform, t.dedupeKey] }),
    index('inbound_events_open').on(t.platform).where(sql`${t.state} <> 'handled'`),
  ],
);

/** Platform message ids of messages baton sent about a run, so a reply can find its run. */
export const runMessages = pgTable(
  'run_messages',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    messageId: text('message_id').notNull(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.messageId] })],
);

/** A conversation's default run directory, set by `/use`. */
export const conversationDefaults = pgTable(
  'conversation_defaults',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    /** '' for a conversation without threads. */
    threadId: text('thread_id').notNull().default(''),
    cwd: text('cwd').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.threadId] })],
);

/**
 * The nodes of a fleet sharing this database: one row per service process life,
 * written at start and refreshed every `[node] heartbeat_seconds`. A node whose heartbeat is
 * older than `dead_after_seconds` is dead. Rows of stopped processes are deleted.
 */
export const nodes = pgTable('nodes', {
  /** `host:pid:random`, unique per process life. */
  instance: text('instance').primaryKey(),
  name: text('name').notNull(),
  host: text('host').notNull(),
  pid: integer('pid').notNull(),
  /** The node's `[workspace] roots`, absolute. */
  roots: jsonb('roots').$type<string[]>().notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }).notNull(),
  heartbeatAt: timestamp('heartbeat_at', { withTimezone: true, mode: 'date' }).notNull(),
});

/**
 * Leases on connections only one process of the fleet may hold (a bot token's long poll): keyed
 * by the platform and a hash of the token (never the token), held by a node instance until
 * `expires_at` (database time), renewed well before then.
 */
export const leases = pgTable('leases', {
  key: text('key').primaryKey(),
  /** The holder's {@link nodes} instance. */
  holder: text('holder').notNull(),
  nodeName: text('node_name').notNull(),
  acquiredAt: timestamp('acquired_at', { withTimezone: true, mode: 'date' }).notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
});

export type NodeRow = typeof nodes.$inferSelect;

/**
 * A decision on a tool approval: `allow` (this call), `allow_run` (this call and the
 * same kind of call for the rest of the run), `deny`, `timeout` (no answer within
 * `approval_timeout_minutes`: denied), `run_gone` (the run ended or the service restarted
 * without it: denied).
 */
export const approvalDecisionEnum = pgEnum('approval_decision', ['allow', 'allow_run', 'deny', 'timeout', 'run_gone']);

/**
 * Tool approvals: one row per permission request claude sent through baton's
 * per-run permission-prompt server, and its decision. `kind` is what "Allow for this run"
 * matches later calls against (see `approvalScope` in src/harness/approval-scope.ts).
 */
export const approvals = pgTable(
  'approvals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    runId: text('run_id')
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    /** The CLI's id of the tool call (claude `tool_use_id`): a retried request finds its row. */
    requestId: text('request_id').notNull(),
    tool: text('tool').notNull(),
    input: jsonb('input').$type<Record<string, unknown>>().notNull(),
    kind: text('kind').notNull(),
    requestedAt: timestamp('requested_at', { withTimezone: true, mode: 'date' }).notNull(),
    decidedAt: timestamp('decided_at', { withTimezone: true, mode: 'date' }),
    decision: approvalDecisionEnum('decision'),
    /** `platform:user id` of who pressed, `baton` for a timeout or a closed run, `rule:<approval id>` for an earlier "Allow for this run". */
    decidedBy: text('decided_by'),
  },
  (t) => [
    uniqueIndex('approvals_request').on(t.runId, t.requestId),
    index('approvals_open').on(t.runId).where(sql`${t.decision} is null`),
  ],
);

export type RunRow = typeof runs.$inferSelect;
export type ApprovalRow = typeof approvals.$inferSelect;
export type NewRunRow = typeof runs.$inferInsert;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type RunStatus = (typeof runStatusEnum.enumValues)[number];

/** Statuses that hold the worktree lock. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['starting', 'running'];

/**
 * Presses acted on, one per message with baton's buttons: the first press of a message's buttons
 * claims it, so a double tap (two presses, two dedupe keys) or a press on a card already decided
 * acts once, whichever process handles it. A press whose action was refused gives its claim back.
 */
export const buttonPresses = pgTable(
  'button_presses',
  {
    platform: text('platform').notNull(),
    chatId: text('chat_id').notNull(),
    /** The platform's id of the message the buttons are under. */
    messageId: text('message_id').notNull(),
    action: text('action').notNull(),
    arg: text('arg').notNull(),
    /** `platform:user id` of who pressed. */
    pressedBy: text('pressed_by').notNull(),
    pressedAt: timestamp('pressed_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The answer the first press got, told to a later press; null while it is being acted on. */
    answer: text('answer'),
  },
  (t) => [primaryKey({ columns: [t.platform, t.chatId, t.messageId] })],
);

export type { ButtonJson } from '../core/buttons.js';
