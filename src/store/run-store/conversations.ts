/**
 * Conversations: `/use` defaults, and moving a conversation to a new chat id.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../database.js';
import { conversationDefaults, deliveries, runs } from '../schema.js';
import type { ConversationKey } from './types.js';

/** Conversations: `/use` defaults, and moving a conversation to a new chat id. */
export class ConversationsRepo {
  constructor(private readonly db: Db) {}

  /** Sets a conversation's default run directory (`/use`). */
  async setConversationDefault(key: ConversationKey, cwd: string, now: Date): Promise<void> {
    await this.db
      .insert(conversationDefaults)
      .values({ ...key, threadId: key.threadId ?? '', cwd, updatedAt: now })
      .onConflictDoUpdate({
        target: [conversationDefaults.platform, conversationDefaults.chatId, conversationDefaults.threadId],
        set: { cwd, updatedAt: now },
      });
  }

  /** A conversation's default run directory, or undefined. */
  async conversationDefault(key: ConversationKey): Promise<string | undefined> {
    const [row] = await this.db
      .select({ cwd: conversationDefaults.cwd })
      .from(conversationDefaults)
      .where(
        and(
          eq(conversationDefaults.platform, key.platform),
          eq(conversationDefaults.chatId, key.chatId),
          eq(conversationDefaults.threadId, key.threadId ?? ''),
        ),
      )
      .limit(1);
    return row?.cwd;
  }

  /**
   * Moves a conversation to a new chat id (a Telegram group upgraded to a supergroup): pending
   * deliveries to the old chat, run origins (so later outcomes and thread lookups follow),
   * `/use` defaults and `/new` marks (one already set in the new chat wins). One transaction.
   */
  async moveConversation(platform: string, fromChatId: string, toChatId: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx
        .update(deliveries)
        .set({ target: sql`jsonb_set(${deliveries.target}, '{chatId}', to_jsonb(${toChatId}::text))` })
        .where(
          and(
            eq(deliveries.status, 'pending'),
            sql`${deliveries.target}->>'platform' = ${platform}`,
            sql`${deliveries.target}->>'chatId' = ${fromChatId}`,
          ),
        );
      await tx
        .update(runs)
        .set({ origin: sql`jsonb_set(${runs.origin}, '{chatId}', to_jsonb(${toChatId}::text))` })
        .where(and(sql`${runs.origin}->>'platform' = ${platform}`, sql`${runs.origin}->>'chatId' = ${fromChatId}`));
      await tx.execute(sql`
        update conversation_defaults as d set chat_id = ${toChatId}
        where d.platform = ${platform} and d.chat_id = ${fromChatId}
          and not exists (select 1 from conversation_defaults n where n.platform = d.platform and n.chat_id = ${toChatId} and n.thread_id = d.thread_id)`);
      await tx
        .delete(conversationDefaults)
        .where(and(eq(conversationDefaults.platform, platform), eq(conversationDefaults.chatId, fromChatId)));
      // A `/new` moves with its conversation (one already made in the new chat wins).
      await tx.execute(sql`
        update conversation_sessions as s set chat_id = ${toChatId}
        where s.platform = ${platform} and s.chat_id = ${fromChatId}
          and not exists (select 1 from conversation_sessions n where n.platform = s.platform and n.chat_id = ${toChatId} and n.thread_id = s.thread_id)`);
      await tx.execute(sql`delete from conversation_sessions where platform = ${platform} and chat_id = ${fromChatId}`);
    });
  }
}
