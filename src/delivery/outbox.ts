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
import { LONG_BODY_PARTS, type DeliveryRow, type DocumentJson, type ReshapeJson } from '../store/schema.js';
import { splitMessage, splitWithReshapes } from './split.js';
import { runTag } from '../wording/run-tag.js';

/** Retry schedule and caps. */
export interface OutboxPolicy {
  /** First retry delay, in ms; doubles per attempt. @default 30_000 */
  backoffBaseMs: number;
  /** Longest retry delay, in ms. @default 1_800_000 (30 min) */
  backoffCapMs: number;
  /** Attempts before a row is dead-lettered. @default 20 */
  maxAttempts: number;
  /** Age after which a row is dead-lettered, in ms. @default 86_400_000 (24 h) */
  maxAgeMs: number;
}

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

/**
 * The parts of a delivery as they are (or were) sent: the platform-sized split, then each stored
 * re-split in order, so a retry resumes on the same layout.
 */
export function layoutParts(body: string, maxLength: number, reshapes: readonly ReshapeJson[]): string[] {
  return splitWithReshapes(body, maxLength, reshapes);
}

/**
 * One thing a delivery sends, in order: a text part, or a file. `partsDelivered`
 * counts these items.
 */
export type DeliveryItem =
  | { kind: 'text'; text: string }
  | { kind: 'document'; document: DocumentJson /** Index in the row's `documents`. */; documentIndex: number };

/**
 * What a delivery sends, in order. A body longer than {@link LONG_BODY_PARTS} messages with a
 * `long_body` file that was not refused goes as its first part then that file; otherwise as all
 * its parts. Files used `always` follow the text. Text parts come first, so a text item's index is
 * its part index (the one reshapes name). A refused file drops out of the list and the items
 * after it move up by one, so `partsDelivered` then points at what comes next: the second text
 * part when `result.md` was refused.
 */
export function deliveryItems(
  row: Pick<DeliveryRow, 'body' | 'reshapes' | 'documents'>,
  maxLength: number,
): DeliveryItem[] {
  const parts = layoutParts(row.body, maxLength, row.reshapes);
  const documents = row.documents ?? [];
  const longBody = documents.findIndex((d) => d.use === 'long_body' && !d.refused);
  const items: DeliveryItem[] =
    longBody >= 0 && splitMessage(row.body, maxLength).length > LONG_BODY_PARTS
      ? [
          { kind: 'text', text: parts[0]! },
          { kind: 'document', document: documents[longBody]!, documentIndex: longBody },
        ]
      : parts.map((text) => ({ kind: 'text', text }));
  documents.forEach((document, documentIndex) => {
    if (document.use === 'always' && !document.refused) items.push({ kind: 'document', document, documentIndex });
  });
  return items;
}

/** Backoff before retry number `attempt` (1-based): base·2^(attempt−1), capped. */
export function backoffMs(attempt: number, policy: Pick<OutboxPolicy, 'backoffBaseMs' | 'backoffCapMs'>): number {
  return Math.min(policy.backoffCapMs, policy.backoffBaseMs * 2 ** Math.max(0, attempt - 1));
}

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
  private async attemptNow(
    claimed: DeliveryRow,
  ): Promise<{ state: 'delivered' | 'pending' | 'dead'; laterPendingInRun: boolean }> {
    // A thread already found closed is not tried again (nor noted again) for every later message.
    let row =
      claimed.target.threadId !== undefined && this.closedThreads.has(threadKey(claimed.target))
        ? atTopLevel(claimed)
        : claimed;
    let moves = 0;
    const { store, clock, logger, adapters } = this.deps;
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
        // A file the platform will not take (or cannot be read, or would dead-letter the row) is
        // marked refused and the message goes on without it: a refused result.md gives way to the
        // remaining text parts, so the text is never lost.
        if (
          item.kind === 'document' &&
          !(err instanceof ChannelSendError && err.movedToChatId !== undefined) &&
          this.givesUpOnDocument(row, err)
        ) {
          logger.warn(
            { deliveryId: row.id, runId: row.runId, file: item.document.filename, err: describe(err) },
            'file not sent; the message goes on without it',
          );
          const documents = row.documents.map((d, i) => (i === item.documentIndex ? { ...d, refused: true } : d));
          await store.outbox.recordDocuments(row.id, documents);
          row = { ...row, documents };
          items = deliveryItems({ ...row, reshapes }, adapter.maxMessageLength);
          index -= 1;
          continue;
        }
        // A part the platform refuses as malformed or too long is never retried unchanged: the
        // rest of the message is re-split in halves (down to MIN_RESHAPE_LENGTH) and sent at once,
        // numbered as finally sent.
        const current = reshapes.at(-1)?.maxLength ?? adapter.maxMessageLength;
        const smaller = item.kind === 'text' ? Math.floor(Math.min(current, item.text.length) / 2) : 0;
        if (err instanceof ChannelSendError && err.kind === 'malformed' && smaller >= MIN_RESHAPE_LENGTH) {
          logger.warn(
            { deliveryId: row.id, part: index + 1, maxLength: smaller },
            'platform refused a part as malformed; re-splitting the rest smaller',
          );
          reshapes = [...reshapes, { fromPart: index, maxLength: smaller }];
          await store.outbox.recordReshapes(row.id, reshapes);
          items = deliveryItems({ ...row, reshapes }, adapter.maxMessageLength);
          index -= 1;
          continue;
        }
        // The chat moved (group → supergroup): the conversation follows it, and this part goes
        // to the new chat at once.
        if (
          err instanceof ChannelSendError &&
          err.movedToChatId !== undefined &&
          err.movedToChatId !== row.target.chatId &&
          moves++ < 3
        ) {
          logger.warn(
            { deliveryId: row.id, from: row.target.chatId, to: err.movedToChatId },
            'chat moved; sending to its new id',
          );
          await store.conversations.moveConversation(
            row.target.platform as Platform,
            row.target.chatId,
            err.movedToChatId,
          );
          row = { ...row, target: { ...row.target, chatId: err.movedToChatId } };
          index -= 1;
          continue;
        }
        // The thread or forum topic was closed: the rest goes to the chat's top level (Telegram's
        // General topic), after a note that says why, instead of a dead letter nobody sees.
        if (err instanceof ChannelSendError && err.threadClosed && row.target.threadId !== undefined) {
          logger.warn(
            { deliveryId: row.id, runId: row.runId, chatId: row.target.chatId },
            "thread closed; sending to the chat's top level",
          );
          this.closedThreads.add(threadKey(row.target));
          row = atTopLevel(row);
          await adapter
            .send({ chatId: row.target.chatId, text: closedThreadNote(row.runId) })
            .catch((noteErr: unknown) =>
              logger.warn({ deliveryId: row.id, err: describe(noteErr) }, 'could not send the closed-thread note'),
            );
          index -= 1;
          continue;
        }
        const retryAfterMs = err instanceof ChannelSendError ? err.retryAfterMs : undefined;
        // A refusal about this message (blocked bot, unknown chat) will not change: dead-letter now.
        const permanent = err instanceof ChannelSendError && !err.retryable;
        logger.warn({ deliveryId: row.id, runId: row.runId, err: describe(err), permanent }, 'delivery attempt failed');
        return { state: await this.fail(row, describe(err), retryAfterMs, permanent), laterPendingInRun: true };
      }
    }
    // Nothing was left to send (the last item was a refused file): the row is done.
    if (!recordedDone)
      ({ laterPendingInRun } = await store.outbox.recordPartsSent(row, items.length, [], true, clock.now()));
    return { state: 'delivered', laterPendingInRun };
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
      backoffMs(row.attempts + 1, policy),
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
    const delayMs = Math.max(retryAfterMs ?? 0, backoffMs(attempts, policy));
    const dead =
      permanent || attempts >= policy.maxAttempts || now + delayMs - row.createdAt.getTime() > policy.maxAgeMs;
    await this.deps.store.outbox.recordAttemptFailed(row.id, error, new Date(now + delayMs), dead);
    if (dead) this.deps.logger.error({ deliveryId: row.id, runId: row.runId, attempts }, 'delivery dead-lettered');
    return dead ? 'dead' : 'pending';
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

/** What the chat's top level is told first when a thread's messages come there instead. */
export function closedThreadNote(runId: string | null): string {
  return `${runId ? `${runTag(runId)} ` : ''}The forum topic this conversation is in is closed, so its messages come here, to the General topic.`;
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
