/**
 * Telegram albums (media groups): the client sends each photo or file of an album as a message of
 * its own, in separate updates that share `media_group_id` (Bot API "Message": `media_group_id`)
 * and may come in different `getUpdates` answers; the caption rides on one of them. An album is
 * one message for baton: its parts are collected until none has come for `waitMs`, then handed on
 * together, so no part is ever left over to go with another command.
 *
 * Nothing here is durable on its own, and needs not be: every part is in the inbox before it is
 * confirmed to Telegram, and unclaimed until the whole album is handled, so after a restart the
 * replay hands all of them here again and the album is collected anew.
 */
import type { Context, MiddlewareFn } from 'grammy';
import type { Update } from 'grammy/types';

/** How long to wait for an album's next part when none is configured, in ms. */
export const ALBUM_WAIT_MS = 1_500;

interface Album {
  updates: Update[];
  timer: NodeJS.Timeout;
  closed: () => void;
}

/** Collects albums; its {@link middleware} goes before the conversation order (`sequentialize`). */
export class AlbumCollector {
  private readonly albums = new Map<string, Album>();
  /** Per chat, the album collected last, until it is handed on: later messages of the chat wait for it. */
  private readonly ahead = new Map<string, Promise<void>>();
  /** The parts of the album an update stands for, once collected. */
  private readonly collected = new WeakMap<Update, Update[]>();

  /** @param waitMs how long to wait for the next part, in ms. */
  constructor(private readonly waitMs: number) {}

  /** The album's parts (by `message_id`) when `update` is the collected album, else undefined. */
  partsOf(update: Update): Update[] | undefined {
    return this.collected.get(update);
  }

  /**
   * Holds an album's first part until the album is complete, then passes it on standing for all
   * parts; drops later parts (they are handed on with the first). Any other message of a chat
   * where an album is being collected waits until that album is passed on, so the chat's order
   * holds.
   */
  middleware(): MiddlewareFn<Context> {
    return async (ctx, next) => {
      const message = ctx.update.message;
      const chat = message
        ? `${message.chat.id}:${message.is_topic_message ? (message.message_thread_id ?? '') : ''}`
        : undefined;
      if (!message || chat === undefined) return next();
      const groupId = message.media_group_id;
      if (groupId === undefined) {
        const ahead = this.ahead.get(chat);
        if (ahead) await ahead;
        return next();
      }
      const key = `${chat}:${groupId}`;
      const album = this.albums.get(key);
      if (album) {
        // A replayed part (the inbox's retry sweep hands out what is unclaimed) is the same update
        // once more: no new part, so the wait goes on as it was.
        if (album.updates.some((u) => u.update_id === ctx.update.update_id)) return;
        album.updates.push(ctx.update);
        clearTimeout(album.timer);
        album.timer = setTimeout(album.closed, this.waitMs);
        return;
      }
      const before = this.ahead.get(chat);
      let passed!: () => void;
      const entered = new Promise<void>((resolve) => (passed = resolve));
      this.ahead.set(chat, entered);
      await new Promise<void>((resolve) => {
        this.albums.set(key, { updates: [ctx.update], timer: setTimeout(resolve, this.waitMs), closed: resolve });
      });
      const parts = this.albums.get(key)!.updates;
      this.albums.delete(key);
      if (before) await before;
      this.collected.set(
        ctx.update,
        [...parts].sort((a, b) => a.message!.message_id - b.message!.message_id),
      );
      // next() queues the album in its conversation synchronously; only then may later messages go.
      const handled = next();
      passed();
      if (this.ahead.get(chat) === entered) this.ahead.delete(chat);
      await handled;
    };
  }
}
