/**
 * A conversation's runs as one conversation with an agent: its active runs, its current session
 * (the newest run it started since its last `/new`), and `/new` itself.
 */
import { and, desc, eq, gt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../database.js';
import { conversationSessions, runs, type RunRow } from '../schema.js';
import { IS_ACTIVE } from './sql-filters.js';
import type { ConversationKey } from './types.js';

/**
 * The runs a conversation started: same platform and chat, and the same thread; a conversation
 * without a thread holds the runs whose origin has none, and those whose origin's thread is its
 * own message (a Slack top-level message, whose answers open a thread under it).
 */
function startedIn(key: ConversationKey): SQL {
  const base = and(sql`${runs.origin}->>'platform' = ${key.platform}`, sql`${runs.origin}->>'chatId' = ${key.chatId}`)!;
  if (key.threadId !== undefined) return and(base, sql`${runs.origin}->>'threadId' = ${key.threadId}`)!;
  return and(
    base,
    sql`(${runs.origin}->>'threadId' is null or ${runs.origin}->>'threadId' = ${runs.origin}->>'messageId')`,
  )!;
}

/** The runs of one conversation, read as one conversation with the agent. */
export class ConversationSessionsRepo {
  constructor(private readonly db: Db) {}

  /** The conversation's runs now `starting` or `running`, oldest first. */
  async activeRuns(key: ConversationKey): Promise<RunRow[]> {
    return this.db
      .select()
      .from(runs)
      .where(and(startedIn(key), IS_ACTIVE))
      .orderBy(runs.createdAt);
  }

  /**
   * The newest run the conversation started since its last `/new` that has a vendor session to
   * resume; undefined when there is none (the next plain message then starts a new run).
   */
  async currentSessionRun(key: ConversationKey): Promise<RunRow | undefined> {
    const since = await this.freshSince(key);
    const [row] = await this.db
      .select()
      .from(runs)
      .where(
        and(startedIn(key), sql`${runs.vendorSessionId} is not null`, since ? gt(runs.createdAt, since) : undefined),
      )
      .orderBy(desc(runs.createdAt))
      .limit(1);
    return row;
  }

  /** `/new`: the runs the conversation started until `now` are no longer its current session. */
  async startFresh(key: ConversationKey, now: Date): Promise<void> {
    await this.db
      .insert(conversationSessions)
      .values({ platform: key.platform, chatId: key.chatId, threadId: key.threadId ?? '', freshSince: now })
      .onConflictDoUpdate({
        target: [conversationSessions.platform, conversationSessions.chatId, conversationSessions.threadId],
        set: { freshSince: now },
      });
  }

  private async freshSince(key: ConversationKey): Promise<Date | undefined> {
    const [row] = await this.db
      .select({ freshSince: conversationSessions.freshSince })
      .from(conversationSessions)
      .where(
        and(
          eq(conversationSessions.platform, key.platform),
          eq(conversationSessions.chatId, key.chatId),
          eq(conversationSessions.threadId, key.threadId ?? ''),
        ),
      )
      .limit(1);
    return row?.freshSince;
  }
}
