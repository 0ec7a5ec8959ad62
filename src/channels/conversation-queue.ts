/**
 * Per-conversation ordering for channels whose SDK hands over events concurrently (Bolt,
 * discord.js): tasks of one conversation key run one after another in the order they were
 * queued; tasks of different keys run concurrently. Telegram gets the same guarantee from the
 * grammY runner's own `sequentialize` (https://grammy.dev/plugins/runner#sequential-processing-where-necessary).
 */

/** Serial lanes keyed by conversation (e.g. `channel:thread`). */
export class ConversationQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /**
   * Queues `task` behind every earlier task of `key` and resolves or rejects with its result. A
   * failed task does not stop the tasks queued after it. The call itself is synchronous up to
   * the queueing, so calls made in arrival order run in arrival order.
   */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      // The lane is idle: forget it so keys do not accumulate.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Number of conversations with a task queued or running (tests, health). */
  get busyConversations(): number {
    return this.tails.size;
  }
}
