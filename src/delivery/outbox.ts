/**
 * Sends delivery rows. A row is written first, in the transaction of its cause,
 * then attempted once inline; a failure leaves it pending with a backoff for the retry worker, or
 * dead-letters it past the attempt or age cap. Parts already sent are never sent again.
 */
import { safeErrorMessage } from '../core/logger.js';
import { readFile } from 'node:fs/promises';
import type { ChannelAdapter, Platform } from '../channels/types.js';
import { ChannelSendError } from '../channels/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { INLINE_LEASE_MS, type NewDelivery, type RunStore } from '../store/runs-repo.js';
import type { DeliveryRow, DocumentJson, ReshapeJson } from '../store/schema.js';
import { deliveryItems, type DeliveryItem } from './delivery-items.js';
import { closedThreadNote } from '../wording/delivery.js';
import { retryDelayMs, type OutboxPolicy } from './retry-schedule.js';

export { backoffMs, QUICK_RETRY_DELAYS_MS, retryDelayMs, type OutboxPolicy } from './retry-schedule.js';

/** Dependencies of the {@link Outbox}. */
export interface OutboxDeps {
  store: RunStore;
  clock: Clock;
  logger: Logger;
  /** Started adapters by platform; a platform missing here leaves its rows pending. */
  adapters: ReadonlyMap<Platform, ChannelAdapter>;
  policy: OutboxPolicy;
}

/** Smallest part length a malformed part is reshaped down to, in UTF-16 units. */
const MIN_RESHAPE_LENGTH = 256;

/** How one attempt of a row ended; see {@link Outbox.attemptNow}. */
type AttemptResult = { state: 'delivered' | 'pending' | 'dead'; laterPendingInRun: boolean };

/** A row to try again at once after a failed part, and whether its items must be laid out again. */
type Recovered = { row: DeliveryRow; reshapes: ReshapeJson[]; moves: number; relayout: boolean };

/** The outbox sender. */
export class Outbox {
  constructor(private readonly deps: OutboxDeps) {}

  /** Writes a message that no state change caused (a command's answer) and attempts it. */
  async send(delivery: NewDelivery): Promise<DeliveryRow> {
    const row = await this.deps.store.outbox.enqueue(delivery, this.deps.clock.now());
    await this.attempt(row);
    return row;
  }

  /**
   * Attempts one delivery row now, resuming after the parts already sent. A run's messages go out
   * in the order they were written: a row waits (stays pending, no attempt counted) while an
   * earlier row of its run is pending, and once a row of a run is delivered or dead-lettered the
   * next pending row of that run is sent at once. Rows of other runs are never held up.
   *
   * @returns true when every part reached the platform. Never throws for a platform failure: the
   *   failure is recorded on the row (retry time or dead letter) and logged.
   */
  attempt(row: DeliveryRow): Promise<boolean> {
    return this.queue(row, false);
  }

  /**
   * Attempts a row the caller has already claimed in run order (the retry worker's
   * {@link RunStore.claimDueDeliveries} leases only rows with no earlier pending row of their run),
   * without claiming it again: one round trip less per row. Otherwise as {@link attempt}.
   */
  attemptClaimed(row: DeliveryRow): Promise<boolean> {
    return this.queue(row, true);
  }

  private queue(row: DeliveryRow, claimed: boolean): Promise<boolean> {
    const runId = row.runId;
    if (!runId) return this.attemptNow(row).then((result) => result.state === 'delivered');
    // In this process, one run's rows are attempted one at a time; across processes the claim
    // in claimInRunOrder decides.
    const previous = this.runQueues.get(runId) ?? Promise.resolve(true);
    const current = previous.catch(() => false).then(() => this.attemptInRunOrder(row, claimed));
    this.runQueues.set(runId, current);
    void current.finally(() => {
      if (this.runQueues.get(runId) === current) this.runQueues.delete(runId);
    });
    return current;
  }

  private readonly runQueues = new Map<string, Promise<boolean>>();
  /** Threads and forum topics a send found closed (in memory: after a restart one send finds out again). */
  private readonly closedThreads = new Set<string>();

  private async attemptInRunOrder(seen: DeliveryRow, claimed: boolean): Promise<boolean> {
    const { store, clock, logger } = this.deps;
    const row = claimed ? seen : await store.outbox.claimInRunOrder(seen, clock.now(), INLINE_LEASE_MS);
    if (!row) {
      logger.debug(
        { deliveryId: seen.id, runId: seen.runId },
        'delivery waits for an earlier message of its run (or was taken)',
      );
      return false;
    }
    const { state, laterPendingInRun } = await this.attemptNow(row);
    // The last write of a delivered row already said whether a later row of the run waits.
    if (state !== 'pending' && laterPendingInRun) {
      const next = await store.outbox.firstPendingOfRun(row.runId!);
      if (next) await this.attemptInRunOrder(next, false);
    }
    return state === 'delivered';
  }

  /**
   * Sends the parts not yet sent. `laterPendingInRun` is false only when the final write proved
   * no later row of the run is pending; true means "look".
   */
  private async attemptNow(claimed: DeliveryRow): Promise<AttemptResult> {
    // A thread already found closed is not tried again (nor noted again) for every later message.
    let row =
      claimed.target.threadId !== undefined && this.closedThreads.has(threadKey(claimed.target))
        ? atTopLevel(claimed)
        : claimed;
    let moves = 0;
    const { store, clock, adapters } = this.deps;
    const adapter = adapters.get(row.target.platform as Platform);
    if (!adapter) {
      return {
        state: await this.fail(row, `channel ${row.target.platform} is not running`, undefined),
        laterPendingInRun: true,
      };
    }
    let laterPendingInRun = true;
    let reshapes = row.reshapes;
    let items = deliveryItems(row, adapter.maxMessageLength);
    let recordedDone = false;
    for (let index = row.partsDelivered; index < items.length; index++) {
      const item = items[index]!;
      try {
        const messageId =
          item.kind === 'text'
            ? await this.sendPart(adapter, row, item.text, index === lastTextOf(items))
            : await this.sendDocument(adapter, row, item.document);
        recordedDone = index + 1 === items.length;
        ({ laterPendingInRun } = await store.outbox.recordPartsSent(
          row,
          index + 1,
          [messageId],
          recordedDone,
          clock.now(),
        ));
      } catch (err) {
        // Only a failed part gets here: the loop over parts that go through stays as it was.
        const next = await this.recoverPart(adapter, row, reshapes, item, index, moves, err);
        if ('state' in next) return next;
        ({ row, reshapes, moves } = next);
        if (next.relayout) items = deliveryItems({ ...row, reshapes }, adapter.maxMessageLength);
        index -= 1;
        continue;
      }
    }
    // Nothing was left to send (the last item was a refused file): the row is done.
    if (!recordedDone)
      ({ laterPendingInRun } = await store.outbox.recordPartsSent(row, items.length, [], true, clock.now()));
    return { state: 'delivered', laterPendingInRun };
  }

  /**
   * What follows a part that failed to go: the row as it is to be tried again at once (a file
   * dropped, the rest re-split, the chat moved, the thread closed; `relayout` when its items must
   * be worked out again), or the attempt's result when the failure is recorded on the row.
   */
  private async recoverPart(
    adapter: ChannelAdapter,
    row: DeliveryRow,
    reshapes: ReshapeJson[],
    item: DeliveryItem,
    index: number,
    moves: number,
    err: unknown,
  ): Promise<Recovered | AttemptResult> {
    // A file the platform will not take (or cannot be read, or would dead-letter the row) is
    // marked refused and the message goes on without it: a refused result.md gives way to the
    // remaining text parts, so the text is never lost.
    if (
      item.kind === 'document' &&
      !(err instanceof ChannelSendError && err.movedToChatId !== undefined) &&
      this.givesUpOnDocument(row, err)
    ) {
      return { row: await this.refuseDocument(row, item, err), reshapes, moves, relayout: true };
    }
    // A part the platform refuses as malformed or too long is never retried unchanged: the
    // rest of the message is re-split in halves (down to MIN_RESHAPE_LENGTH) and sent at once,
    // numbered as finally sent.
    const current = reshapes.at(-1)?.maxLength ?? adapter.maxMessageLength;
    const smaller = item.kind === 'text' ? Math.floor(Math.min(current, item.text.length) / 2) : 0;
    if (err instanceof ChannelSendError && err.kind === 'malformed' && smaller >= MIN_RESHAPE_LENGTH) {
      return { row, reshapes: await this.reshapeRest(row, reshapes, index, smaller), moves, relayout: true };
    }
    // The chat moved (group → supergroup): the conversation follows it, and this part goes
    // to the new chat at once.
    if (
      err instanceof ChannelSendError &&
      err.movedToChatId !== undefined &&
      err.movedToChatId !== row.target.chatId &&
      moves++ < 3
    ) {
      return { row: await this.followMovedChat(row, err.movedToChatId), reshapes, moves, relayout: false };
    }
    // The thread or forum topic was closed: the rest goes to the chat's top level (Telegram's
    // General topic), after a note that says why, instead of a dead letter nobody sees.
    if (err instanceof ChannelSendError && err.threadClosed && row.target.threadId !== undefined) {
      return { row: await this.leaveClosedThread(adapter, row), reshapes, moves, relayout: false };
    }
    const retryAfterMs = err instanceof ChannelSendError ? err.retryAfterMs : undefined;
    // A refusal about this message (blocked bot, unknown chat) will not change: dead-letter now.
    const permanent = err instanceof ChannelSendError && !err.retryable;
    this.deps.logger.warn(
      { deliveryId: row.id, runId: row.runId, err: describe(err), permanent },
      'delivery attempt failed',
    );
    return { state: await this.fail(row, describe(err), retryAfterMs, permanent), laterPendingInRun: true };
  }

  /** Marks a file of the row refused (stored) and returns the row without it. */
  private async refuseDocument(
    row: DeliveryRow,
    item: Extract<DeliveryItem, { kind: 'document' }>,
    err: unknown,
  ): Promise<DeliveryRow> {
    this.deps.logger.warn(
      { deliveryId: row.id, runId: row.runId, file: item.document.filename, err: describe(err) },
      'file not sent; the message goes on without it',
    );
    const documents = row.documents.map((d, i) => (i === item.documentIndex ? { ...d, refused: true } : d));
    await this.deps.store.outbox.recordDocuments(row.id, documents);
    return { ...row, documents };
  }

  /** Stores a re-split of the row from part `index` on at `maxLength`; returns the new reshapes. */
  private async reshapeRest(
    row: DeliveryRow,
    reshapes: ReshapeJson[],
    index: number,
    maxLength: number,
  ): Promise<ReshapeJson[]> {
    this.deps.logger.warn(
      { deliveryId: row.id, part: index + 1, maxLength },
      'platform refused a part as malformed; re-splitting the rest smaller',
    );
    const next = [...reshapes, { fromPart: index, maxLength }];
    await this.deps.store.outbox.recordReshapes(row.id, next);
    return next;
  }

  /** Moves the row's conversation to the chat's new id; returns the row aimed there. */
  private async followMovedChat(row: DeliveryRow, chatId: string): Promise<DeliveryRow> {
    this.deps.logger.warn(
      { deliveryId: row.id, from: row.target.chatId, to: chatId },
      'chat moved; sending to its new id',
    );
    await this.deps.store.conversations.moveConversation(row.target.platform as Platform, row.target.chatId, chatId);
    return { ...row, target: { ...row.target, chatId } };
  }

  /** Remembers the row's thread as closed and tells the chat's top level why its messages come there. */
  private async leaveClosedThread(adapter: ChannelAdapter, closed: DeliveryRow): Promise<DeliveryRow> {
    const { logger } = this.deps;
    logger.warn(
      { deliveryId: closed.id, runId: closed.runId, chatId: closed.target.chatId },
      "thread closed; sending to the chat's top level",
    );
    this.closedThreads.add(threadKey(closed.target));
    const row = atTopLevel(closed);
    await adapter
      .send({ chatId: row.target.chatId, text: closedThreadNote(row.runId) })
      .catch((noteErr: unknown) =>
        logger.warn({ deliveryId: row.id, err: describe(noteErr) }, 'could not send the closed-thread note'),
      );
    return row;
  }

  /**
   * Whether a file that failed to go is given up on now: the platform refused it for good, or
   * this failure would dead-letter the row (then the text goes instead).
   */
  private givesUpOnDocument(row: DeliveryRow, err: unknown): boolean {
    if (err instanceof DocumentUnavailable) return true;
    if (err instanceof ChannelSendError && !err.retryable) return true;
    const { policy, clock } = this.deps;
    const delayMs = Math.max(
      err instanceof ChannelSendError ? (err.retryAfterMs ?? 0) : 0,
      retryDelayMs(row.attempts + 1, policy),
    );
    return (
      row.attempts + 1 >= policy.maxAttempts || clock.nowMs() + delayMs - row.createdAt.getTime() > policy.maxAgeMs
    );
  }

  /**
   * Sends one file of a delivery, read from disk now.
   *
   * @throws DocumentUnavailable when the adapter sends no files or the file cannot be read.
   */
  private async sendDocument(adapter: ChannelAdapter, row: DeliveryRow, document: DocumentJson): Promise<string> {
    if (!adapter.sendDocument) throw new DocumentUnavailable(`${adapter.platform} sends no files`);
    let content: Buffer;
    try {
      content = await readFile(document.path);
    } catch (err) {
      throw new DocumentUnavailable(
        `cannot read ${document.path}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    const { messageId } = await adapter.sendDocument({
      chatId: row.target.chatId,
      ...(row.target.threadId ? { threadId: row.target.threadId } : {}),
      ...(row.target.replyToMessageId ? { replyToMessageId: row.target.replyToMessageId } : {}),
      filename: document.filename,
      content,
      ...(document.caption ? { caption: document.caption } : {}),
    });
    return messageId;
  }

  private async sendPart(adapter: ChannelAdapter, row: DeliveryRow, text: string, last: boolean): Promise<string> {
    const { messageId } = await adapter.send({
      ...(last && row.buttons?.length ? { buttons: row.buttons } : {}),
      chatId: row.target.chatId,
      ...(row.target.threadId ? { threadId: row.target.threadId } : {}),
      ...(row.target.replyToMessageId ? { replyToMessageId: row.target.replyToMessageId } : {}),
      ...(row.format === 'markdown' ? { format: 'markdown' as const } : {}),
      text,
    });
    return messageId;
  }

  /** Records a failed attempt; returns the row's new state. */
  private async fail(
    row: DeliveryRow,
    error: string,
    retryAfterMs: number | undefined,
    permanent = false,
  ): Promise<'pending' | 'dead'> {
    const { policy, clock } = this.deps;
    const attempts = row.attempts + 1;
    const now = clock.nowMs();
    const delayMs = Math.max(retryAfterMs ?? 0, retryDelayMs(attempts, policy));
    const dead =
      permanent || attempts >= policy.maxAttempts || now + delayMs - row.createdAt.getTime() > policy.maxAgeMs;
    const nextAttemptAt = new Date(now + delayMs);
    await this.deps.store.outbox.recordAttemptFailed(row.id, error, nextAttemptAt, dead);
    if (dead) this.deps.logger.error({ deliveryId: row.id, runId: row.runId, attempts }, 'delivery dead-lettered');
    else if (attempts <= (policy.quickRetryDelaysMs ?? []).length)
      this.retryAt({ ...row, attempts, nextAttemptAt }, delayMs);
    return dead ? 'dead' : 'pending';
  }

  /**
   * Attempts `row` again in `delayMs` (a quick retry), if it is still this process's to send
   * then: pending, first of its run, and due at the `nextAttemptAt` written with the failure (a
   * retry worker that claimed it meanwhile moved that, and sends it instead). The timer keeps no
   * process alive; a failure of the attempt's own database writes is logged.
   */
  private retryAt(row: DeliveryRow, delayMs: number): void {
    const { store, clock, logger } = this.deps;
    const timer = setTimeout(() => {
      void store.outbox
        .claimInRunOrder(row, clock.now(), INLINE_LEASE_MS)
        .then((claimed) => (claimed ? this.attemptClaimed(claimed) : false))
        .catch((err: unknown) =>
          logger.warn({ deliveryId: row.id, err: describe(err) }, 'quick retry of a delivery failed'),
        );
    }, delayMs);
    timer.unref();
  }
}

/** `platform:chat:thread` of a delivery's target. */
function threadKey(target: DeliveryRow['target']): string {
  return `${target.platform}:${target.chatId}:${target.threadId ?? ''}`;
}

/** The row sent to its chat's top level: no thread, and no reply to a message inside the thread. */
function atTopLevel(row: DeliveryRow): DeliveryRow {
  const { threadId: _closed, replyToMessageId: _inside, ...top } = row.target;
  return { ...row, target: top };
}

/** A delivery's file cannot be sent at all: the adapter sends no files, or the file is gone. */
class DocumentUnavailable extends Error {}

/** One line for the log; a failed query's parameters (message text) are withheld. */
function describe(err: unknown): string {
  if (err instanceof ChannelSendError) return `${err.kind}: ${safeErrorMessage(err)}`;
  return safeErrorMessage(err);
}

/** Index of the last text part of a delivery's items (its buttons go under it), or -1. */
function lastTextOf(items: readonly { kind: string }[]): number {
  for (let i = items.length - 1; i >= 0; i--) if (items[i]!.kind === 'text') return i;
  return -1;
}
