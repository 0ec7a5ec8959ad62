/**
 * Run and delivery persistence, one repository per table. Every state change that causes a
 * message writes that message's delivery row in the same transaction, so an outcome is never lost
 * between the two writes.
 */
import type { Db } from './database.js';
import { ConversationSessionsRepo } from './run-store/conversation-sessions.js';
import { ConversationsRepo } from './run-store/conversations.js';
import { InboxRepo } from './run-store/inbox.js';
import { LaunchesRepo } from './run-store/launches.js';
import { OutboxRepo } from './run-store/outbox.js';
import { QueueRepo } from './run-store/queue.js';
import { PlanWindowsRepo } from './run-store/plan-windows.js';
import { QuotaRepo } from './run-store/quota.js';
import { RunsRepo } from './run-store/runs.js';

export { LAUNCH_LOCK_KEY, RUNS_CHANNEL } from './run-store/sql-filters.js';
export { INLINE_LEASE_MS, storableText } from './run-store/transaction.js';
export type {
  ActiveLimits,
  ConversationKey,
  InboundKey,
  InboxEntry,
  NewDelivery,
  QueuePlace,
  QueuePolicy,
  RunTerminal,
} from './run-store/types.js';
export type {
  ConversationSessionsRepo,
  ConversationsRepo,
  InboxRepo,
  LaunchesRepo,
  OutboxRepo,
  QueueRepo,
  QuotaRepo,
  RunsRepo,
};
export type { ExhaustedVendor } from './run-store/quota.js';
export type { PlanWindowsRepo, ReportedWindow } from './run-store/plan-windows.js';

/**
 * The run repositories over one database: the only module that writes `runs`, `deliveries`,
 * `inbound_events` and `conversation_defaults`.
 */
export class RunStore {
  /** Raw inbound updates (`inbound_events`). */
  readonly inbox: InboxRepo;
  /** New runs and their `started` messages, under the launch lock. */
  readonly launches: LaunchesRepo;
  /** Runs waiting `queued`, and their claim. */
  readonly queue: QueueRepo;
  /** Run rows after launch. */
  readonly runs: RunsRepo;
  /** `/use` defaults and chat id moves. */
  readonly conversations: ConversationsRepo;
  /** A conversation's active runs, its current session and `/new`. */
  readonly sessions: ConversationSessionsRepo;
  /** The outbox (`deliveries`). */
  readonly outbox: OutboxRepo;
  /** Vendors at their plan's limit, as runs recorded it. */
  readonly quota: QuotaRepo;
  /** The plan windows the CLIs reported, and their warnings. */
  readonly planWindows: PlanWindowsRepo;

  constructor(private readonly db: Db) {
    this.inbox = new InboxRepo(db);
    this.launches = new LaunchesRepo(db);
    this.queue = new QueueRepo(db);
    this.runs = new RunsRepo(db);
    this.conversations = new ConversationsRepo(db);
    this.sessions = new ConversationSessionsRepo(db);
    this.outbox = new OutboxRepo(db);
    this.quota = new QuotaRepo(db);
    this.planWindows = new PlanWindowsRepo(db);
  }

  /** The database this store writes to, for the repositories of other tables. */
  get database(): Db {
    return this.db;
  }
}
