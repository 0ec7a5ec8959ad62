/**
 * Receiving Telegram messages: an album's parts joined into one message, each conversation
 * handled in arrival order, a group's upgrade to a supergroup followed, and every update's inbox
 * entry kept while it is handled.
 */
import { sequentialize } from '@grammyjs/runner';
import type { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { ChannelInbox } from '../inbox.js';
import type { ConversationMover, IncomingAttachment, InboundHandler, InboundMessage } from '../types.js';
import { ALBUM_WAIT_MS, AlbumCollector } from './albums.js';
import {
  normalizeTelegramAlbum,
  normalizeTelegramUpdate,
  telegramDedupeKey,
  type TelegramFileRef,
} from './normalize.js';

/** What receiving needs: the bot, its identity from `getMe`, and where updates are kept and handed. */
export interface TelegramReceiveContext {
  bot: Bot;
  me: { id: number; username: string };
  clock: Clock;
  logger: Logger;
  inbox: ChannelInbox<Update>;
}

/** What of the adapter's options receiving reads. */
export interface TelegramReceiveOptions {
  /** Messages handled at once, not behind their conversation's earlier ones. @default none */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
  /** Told when a group is upgraded to a supergroup. @default none */
  conversations?: ConversationMover | undefined;
  /** Wait for an album's next part, in ms. @default {@link ALBUM_WAIT_MS} */
  albumWaitMs?: number | undefined;
}

/**
 * Registers the message handling on the bot: album collection, then the conversation order,
 * then `handler` with each normalized message (files through `attach`, fetched only on demand).
 */
export function receiveTelegramMessages(
  context: TelegramReceiveContext,
  options: TelegramReceiveOptions,
  attach: (file: TelegramFileRef) => IncomingAttachment,
  handler: InboundHandler,
): void {
  const { bot, me, clock, logger, inbox } = context;
  // The runner handles the updates of one getUpdates answer concurrently; one conversation
  // (a chat, or a forum topic in it) is handled strictly in arrival order, so `/codex …` then
  // `/stop`, or `/use B` then `/codex …`, act as sent. Other conversations stay concurrent.
  // `/stop`, `/cancel` and button presses are not queued: an earlier message of the conversation
  // may take long (a launch downloading its files), and they must be answered meanwhile.
  const overtakes = options.overtakes;
  // Before the conversation order: an album's parts are collected into one message first.
  const albums = new AlbumCollector(options.albumWaitMs ?? ALBUM_WAIT_MS);
  bot.use(albums.middleware());
  bot.use(
    sequentialize((ctx: { update: Update }) => {
      if (ctx.update.callback_query) return undefined;
      if (overtakes) {
        const message = normalizeTelegramUpdate(ctx.update, me, clock.now());
        if (message && overtakes(message)) return undefined;
      }
      return conversationKey(ctx);
    }),
  );
  bot.on('message', async (ctx) => {
    const move = supergroupMove(ctx.message);
    if (move) {
      logger.info(
        { channel: 'telegram', from: move[0], to: move[1] },
        'group upgraded to a supergroup; its conversation moves',
      );
      await options.conversations?.moveConversation('telegram', String(move[0]), String(move[1]));
    }
    const parts = albums.partsOf(ctx.update);
    const message = parts
      ? normalizeTelegramAlbum(parts, me, clock.now(), attach)
      : normalizeTelegramUpdate(ctx.update, me, clock.now(), attach);
    const keys = (parts ?? [ctx.update]).map((u) => telegramDedupeKey(me.id, u.update_id));
    if (!message) {
      for (const key of keys) await inbox.forget(key);
      return;
    }
    // Every part is in flight while the album is handled, so the retry sweep never hands one out alone.
    const tracked = keys.reduceRight<() => Promise<void>>(
      (inner, key) => () => inbox.track(key, inner),
      () => handler(message),
    );
    await tracked();
  });
}

/**
 * A group upgraded to a supergroup: Telegram posts migrate_to_chat_id in the old chat and
 * migrate_from_chat_id in the new one. Acting on either (the move is idempotent) puts the move
 * ahead of later messages of the new chat, which share its conversation order.
 *
 * @returns `[from, to]` chat ids, or undefined for any other message.
 */
function supergroupMove(message: {
  chat: { id: number };
  migrate_to_chat_id?: number;
  migrate_from_chat_id?: number;
}): [number, number] | undefined {
  const { migrate_to_chat_id: movedTo, migrate_from_chat_id: movedFrom, chat } = message;
  if (movedTo !== undefined) return [chat.id, movedTo];
  if (movedFrom !== undefined) return [movedFrom, chat.id];
  return undefined;
}

/**
 * The conversation an update belongs to, `chat:topic` (topic empty outside forum topics), or
 * undefined for updates without a chat (handled without ordering).
 */
export function conversationKey(ctx: { update: Update }): string | undefined {
  const message = ctx.update.message ?? ctx.update.edited_message ?? ctx.update.callback_query?.message;
  if (!message) return undefined;
  const topic =
    message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : '';
  return `${message.chat.id}:${topic}`;
}
