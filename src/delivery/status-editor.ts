/**
 * The live status of a run: the run's `started` message is edited in place
 * (Telegram `editMessageText`, Slack `chat.update`, Discord message edit) with what the run is
 * doing, and a last time with how it ended. Best effort, and never in the way of the outcome,
 * which stays a new message from the outbox so the owner is notified:
 *
 * - at most one edit per `intervalMs` per conversation (platform, chat, thread), counted from the
 *   end of the previous edit call, so a burst of tool calls yields one edit per interval with the
 *   latest state;
 * - a rate limit (Telegram 429 `retry_after`, Slack `Retry-After`, Discord's 429) holds every
 *   later edit of that conversation until it has passed;
 * - an edit is only attempted once the `started` message has been delivered (its platform message
 *   id is recorded on the delivery row); before that it is skipped;
 * - a failed edit is logged (warn); a run whose edits failed {@link StatusEditorDeps.maxFailures}
 *   times is left alone. Nothing is stored: a restart forgets the live state;
 * - when runs end in one conversation faster than it may be edited, at most
 *   {@link StatusEditorDeps.maxEndedWaiting} ended runs wait for their last edit; older ones are
 *   dropped (their outcome message was sent; only their started message keeps its last status).
 *   Otherwise the line, and the memory holding it, grew with every run (the soak benchmark: one
 *   chat, 4–8 runs a second, one edit per 5 s).
 */
import type { ButtonJson } from '../core/buttons.js';
import type { ChannelAdapter, Platform } from '../channels/types.js';
import { ChannelSendError } from '../channels/types.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { RunStore } from '../store/runs-repo.js';
import type { RunRow } from '../store/schema.js';
import { layoutParts } from './delivery-items.js';

/** Dependencies of the {@link StatusEditor}. */
export interface StatusEditorDeps {
  store: { outbox: Pick<RunStore['outbox'], 'startedDelivery'> };
  /** Started adapters by platform (the outbox's map); a platform without `editMessage` gets no edits. */
  adapters: ReadonlyMap<Platform, ChannelAdapter>;
  clock: Clock;
  logger: Logger;
  /** Least time between two edits in one conversation, in ms (`[harness] status_edit_seconds`); 0 turns edits off. */
  intervalMs: number;
  /** Failed edits of one run after which its status is left alone. @default 3 */
  maxFailures?: number;
  /** Ended runs of one conversation that may wait for their last edit; the oldest beyond it get none. @default 10 */
  maxEndedWaiting?: number;
}

/** A run as the editor needs it. */
export type StatusRun = Pick<RunRow, 'id' | 'origin'>;

/** Renders the status lines (below the started text) from the run's state at edit time. */
export type StatusRender = () => string;

interface RunState {
  run: StatusRun;
  render: StatusRender;
  final: boolean;
  failures: number;
  /** Its edits failed for good: no more edits until the run ends. */
  gaveUp?: boolean;
  /** The started message once found delivered: where to edit and the text it was sent with. */
  message?: { chatId: string; threadId?: string; messageId: string; base: string; buttons?: ButtonJson[] };
  lastText?: string;
}

interface Conversation {
  /** When the last edit call ended (ms since the epoch). */
  lastEditMs: number;
  /** No edit before this (a platform rate limit), ms since the epoch. */
  blockedUntilMs: number;
  timer?: NodeJS.Timeout | undefined;
  busy: boolean;
  /** Runs with a newer state than their message shows, oldest first. */
  dirty: Set<string>;
  /** Ended runs have been dropped from the line since the conversation was last idle (logged once). */
  shedding?: boolean;
}

/** Edits runs' `started` messages into live status messages; see the module comment. */
export class StatusEditor {
  private readonly runs = new Map<string, RunState>();
  private readonly conversations = new Map<string, Conversation>();
  private stopped = false;

  constructor(private readonly deps: StatusEditorDeps) {}

  /** Runs the editor holds (active, or ended and waiting for their last edit), for diagnostics and tests. */
  get heldRuns(): number {
    return this.runs.size;
  }

  /** Whether runs from `platform` get a live status (edits are on and its adapter can edit). */
  enabledFor(platform: string): boolean {
    return this.deps.intervalMs > 0 && typeof this.deps.adapters.get(platform as Platform)?.editMessage === 'function';
  }

  /** The run's state changed: its message is edited at the next allowed moment, rendered then. */
  update(run: StatusRun, render: StatusRender): void {
    this.mark(run, render, false);
  }

  /** The run ended: one last edit (rendered by `render`), then the run is forgotten. */
  finish(run: StatusRun, render: StatusRender): void {
    this.mark(run, render, true);
  }

  /** Drops a run without a last edit (its end was recorded by another process). */
  forget(runId: string): void {
    this.runs.delete(runId);
  }

  /** Stops editing (service shutdown); pending edits are dropped. */
  stop(): void {
    this.stopped = true;
    for (const conversation of this.conversations.values()) if (conversation.timer) clearTimeout(conversation.timer);
    this.conversations.clear();
    this.runs.clear();
  }

  private mark(run: StatusRun, render: StatusRender, final: boolean): void {
    if (this.stopped || !this.enabledFor(run.origin.platform)) return;
    const known = this.runs.get(run.id);
    if (known?.final) return;
    if (known?.gaveUp) {
      if (final) this.runs.delete(run.id);
      return;
    }
    const state: RunState = known ?? { run, render, final, failures: 0 };
    state.render = render;
    state.final = final;
    this.runs.set(run.id, state);
    const key = conversationKey(run);
    let conversation = this.conversations.get(key);
    if (!conversation) {
      conversation = { lastEditMs: -Infinity, blockedUntilMs: -Infinity, busy: false, dirty: new Set() };
      this.conversations.set(key, conversation);
    }
    conversation.dirty.add(run.id);
    if (final) this.shedEnded(key, conversation);
    this.pump(key);
  }

  /** Drops the oldest ended runs waiting in `conversation` beyond `maxEndedWaiting`. */
  private shedEnded(key: string, conversation: Conversation): void {
    const limit = this.deps.maxEndedWaiting ?? 10;
    const ended = [...conversation.dirty].filter((id) => this.runs.get(id)?.final);
    const dropped = ended.slice(0, Math.max(0, ended.length - limit));
    for (const id of dropped) {
      conversation.dirty.delete(id);
      this.runs.delete(id);
    }
    if (dropped.length > 0 && !conversation.shedding) {
      conversation.shedding = true;
      this.deps.logger.warn(
        { conversation: key, endedWaiting: limit, intervalMs: this.deps.intervalMs },
        'live status: runs end in this conversation faster than it may be edited; older ended runs keep their last status (their outcome messages are sent)',
      );
    }
  }

  private pump(key: string): void {
    const conversation = this.conversations.get(key);
    if (!conversation || this.stopped || conversation.busy || conversation.timer) return;
    const dueMs = Math.max(conversation.lastEditMs + this.deps.intervalMs, conversation.blockedUntilMs);
    const nowMs = this.deps.clock.nowMs();
    if (conversation.dirty.size === 0) {
      // Idle and past its window: nothing to remember about it.
      if (nowMs >= dueMs) this.conversations.delete(key);
      return;
    }
    if (nowMs < dueMs) {
      conversation.timer = setTimeout(() => {
        conversation.timer = undefined;
        this.pump(key);
      }, dueMs - nowMs);
      conversation.timer.unref();
      return;
    }
    const runId = conversation.dirty.values().next().value as string;
    conversation.dirty.delete(runId);
    const state = this.runs.get(runId);
    if (!state) return this.pump(key);
    conversation.busy = true;
    void this.edit(conversation, state)
      .catch((err: unknown) => this.deps.logger.warn({ err, runId }, 'live status edit failed'))
      .finally(() => {
        conversation.busy = false;
        if (state.final && !conversation.dirty.has(runId)) this.runs.delete(runId);
        this.pump(key);
      });
  }

  private async edit(conversation: Conversation, state: RunState): Promise<void> {
    const { deps } = this;
    const runId = state.run.id;
    const adapter = deps.adapters.get(state.run.origin.platform as Platform);
    if (!adapter?.editMessage) return;
    if (!state.message) {
      const row = await deps.store.outbox.startedDelivery(runId);
      const ids = row?.platformMessageIds ?? [];
      // Not delivered yet: this edit is skipped; the next change of the run tries again.
      if (!row || row.status !== 'delivered' || ids.length === 0) {
        deps.logger.debug({ runId }, 'live status: the started message is not delivered yet; edit skipped');
        return;
      }
      // The status goes below the last part of the started message (usually its only part).
      const parts = layoutParts(row.body, adapter.maxMessageLength, row.reshapes);
      state.message = {
        chatId: row.target.chatId,
        ...(row.target.threadId ? { threadId: row.target.threadId } : {}),
        messageId: ids.at(-1)!,
        base: parts.at(-1) ?? row.body,
        // Telegram drops an inline keyboard an edit does not repeat: the Stop button stays while the run does.
        ...(row.buttons?.length ? { buttons: row.buttons } : {}),
      };
    }
    const text = fitStatus(state.message.base, state.render(), adapter.maxMessageLength);
    if (text === state.lastText) return;
    try {
      const buttons = state.final ? undefined : state.message.buttons;
      await adapter.editMessage({
        chatId: state.message.chatId,
        ...(state.message.threadId ? { threadId: state.message.threadId } : {}),
        messageId: state.message.messageId,
        text,
        ...(buttons ? { buttons } : {}),
      });
      state.lastText = text;
    } catch (err) {
      state.failures += 1;
      const retryAfterMs = err instanceof ChannelSendError ? err.retryAfterMs : undefined;
      if (retryAfterMs !== undefined) conversation.blockedUntilMs = deps.clock.nowMs() + retryAfterMs;
      const retryable = err instanceof ChannelSendError && err.retryable;
      const again = retryable && state.failures < (deps.maxFailures ?? 3);
      deps.logger.warn(
        {
          runId,
          err: err instanceof Error ? err.message : String(err),
          retryAfterMs,
          failures: state.failures,
          tryAgain: again,
        },
        'live status edit failed; the run and its outcome are not affected',
      );
      // A rate limit or network failure: the latest state is tried again after the wait; any
      // other refusal (message deleted, no permission) will not change, so the run is left alone.
      if (again) conversation.dirty.add(runId);
      else state.gaveUp = true;
    } finally {
      conversation.lastEditMs = deps.clock.nowMs();
    }
  }
}

/** `platform:chat:thread`, the unit the throttle counts in. */
function conversationKey(run: StatusRun): string {
  return `${run.origin.platform}:${run.origin.chatId}:${run.origin.threadId ?? ''}`;
}

/**
 * The started text with the status lines below it, within `maxLength` UTF-16 units: the started
 * text is cut first (its first line, `[run hr_…] started …`, survives any realistic limit).
 */
export function fitStatus(base: string, status: string, maxLength: number): string {
  const statusPart = status.length > maxLength - 2 ? `${status.slice(0, Math.max(0, maxLength - 3))}…` : status;
  const room = maxLength - statusPart.length - 1;
  const head = base.length <= room ? base : `${base.slice(0, Math.max(0, room - 1))}…`;
  return `${head}\n${statusPart}`;
}
