/**
 * The drizzle schema: one definition for PostgreSQL (postgres.js) and embedded PGlite. SQL
 * migrations under `migrations/` are generated from this file by `npm run db:generate`.
 */
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

/**
 * Run statuses (PRODUCT.md §8): `starting` and `running` are active, `queued` waits for its
 * worktree or a `max_active` slot (issue #17), the rest terminal.
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
export const vendorEnum = pgEnum('vendor', ['codex', 'claude']);

/** Outbox row states: `dead` rows are kept, listed, never sent. */
export const deliveryStatusEnum = pgEnum('delivery_status', ['pending', 'delivered', 'dead']);

/** Where a request came from, frozen at launch (PRODUCT.md §1 "origin"). */
export interface OriginJson {
  platform: string;
  chatId: string;
  threadId?: string;
  senderId: string;
  messageId: string;
}

/** Token counts a vendor reported for a run; `costUsd` only where the vendor reports it. */
export interface UsageJson {
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  reasoningOutputTokens?: number;
  costUsd?: number;
}

/**
 * One tool call the vendor CLI denied (claude `result.permission_denials[]`, 2.1.332
 * `system/permission_denied`): the tool's name and its command, path or URL on one line, if any.
 */
export interface DenialJson {
  tool: string;
  detail?: string;
}

/** Per-run options the owner asked for. */
export interface RunOptionsJson {
  model?: string;
  sandbox?: string;
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
 * What a queued run launches with once its slot frees (issue #17): the vendor-neutral request
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
  timeoutMs: number;
}

/** One re-split of a delivery: from part `fromPart` (0-based) on, parts of at most `maxLength` UTF-16 units. */
export interface ReshapeJson {
  fromPart: number;
  maxLength: number;
}

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
     * The branch of the git worktree baton made for this run (`baton/<run id>`, issue #17), whose
     * directory is `worktree_root`; null for a run in the checkout itself.
     */
    branch: text('branch'),
    /** Top of the checkout the run's worktree was added from (where `git worktree` is run); null without a worktree. */
    sourceRoot: text('source_root'),
    /** The launch a `queued` run starts with; null once it started (and for runs never queued). */
    launch: jsonb('launch').$type<QueuedLaunchJson>(),
    options: jsonb('options').$type<RunOptionsJson>().notNull(),
    origin: jsonb('origin').$type<OriginJson>().notNull(),
    vendorSessionId: text('vendor_session_id'),
    finalMessage: text('final_message'),
    errorMessage: text('error_message'),
    usage: jsonb('usage').$type<UsageJson>(),
    /** Tool calls the CLI denied during the run; empty when none (PRODUCT.md §8). */
    denials: jsonb('denials').$type<DenialJson[]>().notNull().default([]),
    exitCode: integer('exit_code'),
    exitSignal: text('exit_signal'),
    pid: integer('pid'),
    /** Set by a cancel from another process (`/cancel`, `/stop`, `baton cancel`): the reason code. */
    cancelRequested: text('cancel_requested'),
    /** `events.jsonl` reached `max_run_artifact_mb` and spooling stopped; the run continued. */
    artifactTruncated: boolean('artifact_truncated').notNull().default(false),
    /** `host:pid` of the service process supervising the run, so a restart knows which runs it orphaned. */
    supervisor: text('supervisor').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull(),
    startedAt: timestamp('started_at', { withTimezone: true, mode: 'date' }),
    endedAt: timestamp('ended_at', { withTimezone: true, mode: 'date' }),
  },
  (t) => [
    // The lock domain (PRODUCT.md §6 item 9): at most one active run per worktree root, enforced
    // by the database so two launches racing from two processes can never both pass.
    uniqueIndex('runs_one_active_per_worktree')
      .on(t.worktreeRoot)
      .where(sql`${t.status} in ('starting', 'running')`),
    index('runs_created_at').on(t.createdAt),
    index('runs_active').on(t.status).where(sql`${t.status} in ('starting', 'running')`),
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

/** A conversation's default run directory, set by `/use` (PRODUCT.md §5). */
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

export type RunRow = typeof runs.$inferSelect;
export type NewRunRow = typeof runs.$inferInsert;
export type DeliveryRow = typeof deliveries.$inferSelect;
export type RunStatus = (typeof runStatusEnum.enumValues)[number];
export type Vendor = (typeof vendorEnum.enumValues)[number];

/** Statuses that hold the worktree lock. */
export const ACTIVE_RUN_STATUSES: readonly RunStatus[] = ['starting', 'running'];
