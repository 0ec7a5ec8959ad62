/**
 * Run rows after launch: running, cancel requests, the end of a run, worktrees and lookups.
 */
import { and, desc, eq, inArray, isNotNull, isNull, notInArray, sql } from 'drizzle-orm';
import type { RunId } from '../../core/ids.js';
import type { Db } from '../database.js';
import { ACTIVE_RUN_STATUSES, runMessages, runs, type DeliveryRow, type RunRow } from '../schema.js';
import { endRunWithOutcome, storableOrNull, storableText } from './transaction.js';
import type { NewDelivery, RunTerminal } from './types.js';

/** Run rows after launch: running, cancel requests, the end of a run, worktrees and lookups. */
export class RunsRepo {
  constructor(private readonly db: Db) {}

  /** Moves a `starting` run to `running` once its process exists. */
  async markRunning(id: RunId, pid: number | null, startedAt: Date): Promise<void> {
    await this.db
      .update(runs)
      .set({ status: 'running', pid, startedAt })
      .where(and(eq(runs.id, id), eq(runs.status, 'starting')));
  }

  /**
   * Asks whichever process supervises a run to cancel it.
   *
   * @returns false when the run is not active (finished meanwhile, or unknown).
   */
  async requestCancel(id: string, reason: 'owner_cancel' | 'stop'): Promise<boolean> {
    const updated = await this.db
      .update(runs)
      .set({ cancelRequested: reason })
      .where(and(eq(runs.id, id), inArray(runs.status, [...ACTIVE_RUN_STATUSES])))
      .returning({ id: runs.id });
    return updated.length === 1;
  }

  /** Active runs with a pending cancel request among `ids`. */
  async pendingCancels(ids: readonly string[]): Promise<{ id: string; reason: 'owner_cancel' | 'stop' }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .select({ id: runs.id, reason: runs.cancelRequested })
      .from(runs)
      .where(
        and(
          inArray(runs.id, [...ids]),
          inArray(runs.status, [...ACTIVE_RUN_STATUSES]),
          sql`${runs.cancelRequested} is not null`,
        ),
      );
    return rows.map((r) => ({ id: r.id, reason: r.reason === 'stop' ? 'stop' : 'owner_cancel' }));
  }

  /**
   * Of `ids` (runs this process supervises), those the database already shows ended: another
   * node declared this one lost and ended them `interrupted · node_lost`.
   */
  async endedAmong(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(inArray(runs.id, [...ids]), notInArray(runs.status, [...ACTIVE_RUN_STATUSES])));
    return rows.map((r) => r.id);
  }

  /** Active runs supervised by exactly `supervisor` (`host:pid`). */
  async activeRunsOf(supervisor: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(and(inArray(runs.status, [...ACTIVE_RUN_STATUSES]), eq(runs.supervisor, supervisor)));
  }

  /**
   * Runs ended `interrupted · node_lost` whose supervisor was on `host` (`host:` prefix), ended
   * after `since`: a node that comes back stops what may still run of them.
   */
  async lostRunsOnHost(host: string, since: Date): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(
        and(
          eq(runs.status, 'interrupted'),
          eq(runs.reason, 'node_lost'),
          sql`starts_with(${runs.supervisor}, ${`${host}:`})`,
          sql`${runs.endedAt} >= ${since.toISOString()}::timestamptz`,
        ),
      );
  }

  /** Flags that a run's event spool stopped at its cap. */
  async markArtifactTruncated(id: RunId): Promise<void> {
    await this.db.update(runs).set({ artifactTruncated: true }).where(eq(runs.id, id));
  }

  /** Stores the vendor's session id as soon as the stream reveals it. */
  async setVendorSession(id: RunId, vendorSessionId: string): Promise<void> {
    await this.db
      .update(runs)
      .set({ vendorSessionId: storableText(vendorSessionId) })
      .where(eq(runs.id, id));
  }

  /**
   * Ends an active run and writes its outcome message in the same transaction.
   *
   * @returns the outcome delivery, or null when the run was no longer active (already ended by
   *   a cancel or a restart), in which case nothing is written.
   */
  async finishRun(id: RunId, terminal: RunTerminal, outcome: NewDelivery, now: Date): Promise<DeliveryRow | null> {
    const set = {
      status: terminal.status,
      reason: terminal.reason,
      finalMessage: storableOrNull(terminal.finalMessage),
      errorMessage: storableOrNull(terminal.errorMessage),
      usage: terminal.usage ?? null,
      denials: [...(terminal.denials ?? [])],
      exitCode: terminal.exitCode ?? null,
      exitSignal: terminal.exitSignal ?? null,
      ...(terminal.verification
        ? { verifyReason: terminal.verification.reason, verification: terminal.verification }
        : {}),
      endedAt: terminal.endedAt,
      quotaResetsAt: terminal.quotaResetsAt ? new Date(terminal.quotaResetsAt) : null,
      ...(terminal.vendorSessionId ? { vendorSessionId: terminal.vendorSessionId } : {}),
    };
    const active = and(eq(runs.id, id), inArray(runs.status, [...ACTIVE_RUN_STATUSES]));
    return this.db.transaction((tx) => endRunWithOutcome(tx, active, set, outcome, now));
  }

  /** Active runs whose supervisor id starts with `supervisorPrefix` (e.g. this host). */
  async activeRunsSupervisedBy(supervisorPrefix: string): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(
        and(inArray(runs.status, [...ACTIVE_RUN_STATUSES]), sql`starts_with(${runs.supervisor}, ${supervisorPrefix})`),
      );
  }

  /** All active runs, oldest first. */
  async activeRuns(): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(inArray(runs.status, [...ACTIVE_RUN_STATUSES]))
      .orderBy(runs.createdAt);
  }

  /** Records a run's new wall-clock limit (the "+30 min" button), in whole minutes. */
  async setTimeoutMinutes(id: string, minutes: number): Promise<void> {
    await this.db
      .update(runs)
      .set({ options: sql`jsonb_set(${runs.options}, '{timeoutMinutes}', to_jsonb(${minutes}::int))` })
      .where(eq(runs.id, id));
  }

  /** One run by id, or undefined. */
  async getRun(id: string): Promise<RunRow | undefined> {
    const [row] = await this.db.select().from(runs).where(eq(runs.id, id)).limit(1);
    return row;
  }

  /**
   * Every run that got its own git worktree not yet recorded as removed, newest first.
   *
   * @param node with it, only the runs of that node (`runs.node`), or of its host for runs
   *   written without a node: a fleet shares the database, not the disks the worktrees are on.
   */
  async runsWithWorktree(node?: { name: string; host: string }): Promise<RunRow[]> {
    const mine = node
      ? sql`(${runs.node} = ${node.name} or (${runs.node} is null and starts_with(${runs.supervisor}, ${`${node.host}:`})))`
      : undefined;
    return this.db
      .select()
      .from(runs)
      .where(and(isNotNull(runs.branch), isNull(runs.worktreeRemovedAt), mine))
      .orderBy(desc(runs.createdAt));
  }

  /** Records that the worktree at `worktreeRoot` is gone, on every run that shared it (resumes do). */
  async markWorktreeRemoved(worktreeRoot: string, at: Date): Promise<void> {
    await this.db
      .update(runs)
      .set({ worktreeRemovedAt: at })
      .where(and(eq(runs.worktreeRoot, worktreeRoot), isNotNull(runs.branch), isNull(runs.worktreeRemovedAt)));
  }

  /** The most recent runs, newest first. */
  async recentRuns(limit: number): Promise<RunRow[]> {
    return this.db.select().from(runs).orderBy(desc(runs.createdAt)).limit(limit);
  }

  /** The run a platform message (one baton sent) belongs to, for resume-by-reply. */
  async findRunByMessage(platform: string, chatId: string, messageId: string): Promise<RunRow | undefined> {
    const [row] = await this.db
      .select({ run: runs })
      .from(runMessages)
      .innerJoin(runs, eq(runs.id, runMessages.runId))
      .where(
        and(eq(runMessages.platform, platform), eq(runMessages.chatId, chatId), eq(runMessages.messageId, messageId)),
      )
      .limit(1);
    return row?.run;
  }

  /** The newest run started from a thread (Slack `thread_ts`), for a reply in that thread. */
  async latestRunInThread(platform: string, chatId: string, threadId: string): Promise<RunRow | undefined> {
    const [row] = await this.db
      .select()
      .from(runs)
      .where(
        and(
          sql`${runs.origin}->>'platform' = ${platform}`,
          sql`${runs.origin}->>'chatId' = ${chatId}`,
          sql`${runs.origin}->>'threadId' = ${threadId}`,
        ),
      )
      .orderBy(desc(runs.createdAt))
      .limit(1);
    return row;
  }
}
