/**
 * Firing schedules, on every node: each look finds the latest due slot of each active schedule,
 * claims it in the database (one node wins each slot, across restarts), checks the overlap
 * guard, then hands the schedule's launch command to the dispatcher as a message of its owner
 * in its frozen conversation, so consent, trust, the workspace roots and every other launch gate
 * are checked now, at firing time, as for any launch. A refused firing is recorded `blocked`
 * with the gate's code, and its conversation is told.
 */
import type { InboundMessage, Platform } from '../../channels/types.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { Outbox } from '../../delivery/outbox.js';
import type { ScheduleStore } from '../../store/schedules-repo.js';
import type { FiringRow, ScheduleRow } from '../../store/schema.js';
import * as words from '../../wording/schedules.js';
import type { DispatchResult } from '../deps.js';
import { isFinished, latestDueSlot, type ScheduleWhen } from './slots.js';

/** What the firing loop acts with. */
export interface ScheduleFiringDeps {
  schedules: ScheduleStore;
  outbox: Pick<Outbox, 'send'>;
  clock: Clock;
  logger: Logger;
  /** This node's `[node] name`, recorded on each firing it claims. */
  node: string;
  /** `[schedules] catch_up` as it stands now. */
  catchUp(): 'one' | 'none';
  /** The dispatcher's `handle`: the launch, with every gate. */
  handle(message: InboundMessage): Promise<DispatchResult>;
  /**
   * A slot found later than this was missed by every node (they were all down): it fires late
   * (`catch_up = "one"`, and says by how much) or not at all (`"none"`), in ms. @default 60 000
   */
  lateAfterMs?: number;
}

/** The default of {@link ScheduleFiringDeps.lateAfterMs}, in ms. */
export const LATE_AFTER_MS = 60_000;

/**
 * A firing still `claimed` this long after its claim lost its node before the launch (a launch
 * takes seconds); another node then takes it over, in ms.
 */
export const STALE_CLAIM_MS = 120_000;

/** A schedule row's slots. */
export function whenOf(s: Pick<ScheduleRow, 'cron' | 'runAt' | 'timezone' | 'until'>): ScheduleWhen {
  return { cron: s.cron, runAt: s.runAt, timezone: s.timezone, until: s.until };
}

/** The message a firing hands to the dispatcher: the owner's launch command, in the frozen conversation. */
export function firingMessage(s: ScheduleRow, firing: Pick<FiringRow, 'slotAt'>, now: Date): InboundMessage {
  const { target } = s;
  return {
    platform: target.platform as Platform,
    // The inbox claims this key once: a second hand-over of one slot can never launch twice.
    dedupeKey: `schedule:${s.id}:${firing.slotAt.toISOString()}`,
    chatId: target.chatId,
    isDirect: false,
    ...(target.threadId ? { threadId: target.threadId } : {}),
    messageId: target.replyToMessageId ?? '',
    senderId: s.ownerId,
    senderName: words.scheduleTag(s),
    senderIsBot: false,
    text: s.command,
    scheduleTag: words.scheduleTag(s),
    receivedAt: now,
  };
}

/** The firing loop's work, one look at a time. */
export class ScheduleFiring {
  constructor(private readonly deps: ScheduleFiringDeps) {}

  /** One look at every active schedule and every waiting firing. Never throws: failures are logged. */
  async tick(): Promise<void> {
    const { schedules, logger } = this.deps;
    let active: ScheduleRow[];
    try {
      active = await schedules.active();
    } catch (err) {
      logger.warn({ err }, 'could not read the schedules');
      return;
    }
    for (const schedule of active) {
      await this.look(schedule).catch((err: unknown) =>
        logger.error({ err, scheduleId: schedule.id }, 'could not fire a schedule'),
      );
    }
    await this.pending().catch((err: unknown) => logger.error({ err }, 'could not fire waiting schedule slots'));
  }

  /** Fires the latest due slot of `schedule`, if no node has; then ends a schedule with no slot left. */
  private async look(schedule: ScheduleRow): Promise<void> {
    const { schedules, clock, node } = this.deps;
    const now = clock.now();
    const when = whenOf(schedule);
    const last = await schedules.lastFiring(schedule.id, true);
    const since = last && last.slotAt > schedule.createdAt ? last.slotAt : schedule.createdAt;
    const slot = latestDueSlot(when, now, since);
    const stale = last?.status === 'claimed' && now.getTime() - last.claimedAt.getTime() >= STALE_CLAIM_MS;
    if (last && stale && slot) await schedules.settle(last, { status: 'missed', reason: 'node_lost' });
    else if (last && stale) {
      // Its node died between the claim and the launch. The inbox key of the slot still stops a
      // second run if that node did launch it.
      const retaken = await schedules.retake(last, node, new Date(now.getTime() - STALE_CLAIM_MS), now);
      if (retaken) await this.fire(schedule, retaken, false);
    }
    if (slot) {
      const late = now.getTime() - slot.getTime() >= (this.deps.lateAfterMs ?? LATE_AFTER_MS);
      const missed = late && this.deps.catchUp() === 'none';
      const firing = await schedules.claim(
        { scheduleId: schedule.id, slotAt: slot, node, now },
        missed ? 'missed' : 'claimed',
      );
      if (firing && !missed) await this.fire(schedule, firing, false);
    }
    if (isFinished(when, now)) await this.finish(schedule);
  }

  /** Marks a schedule with no slot left: a one-shot `done`, a cron schedule past `until` `expired` (and says so). */
  private async finish(schedule: ScheduleRow): Promise<void> {
    const ended = await this.deps.schedules.setState(schedule.id, schedule.cron ? 'expired' : 'done', ['active']);
    if (ended && schedule.cron) await this.notify(schedule, words.expiredText(schedule));
  }

  /** Launches the waiting and requested firings whose turn has come, one node each. */
  private async pending(): Promise<void> {
    const { schedules, node } = this.deps;
    for (const waiting of await schedules.pending()) {
      const schedule = await schedules.get(waiting.scheduleId);
      if (!schedule || schedule.state === 'deleted') continue;
      if (waiting.status === 'waiting' && (await schedules.unfinishedRun(schedule.id))) continue;
      const from = waiting.status === 'waiting' ? 'waiting' : 'requested';
      const taken = await schedules.take(waiting, from, node);
      if (taken) await this.fire(schedule, taken, from === 'waiting');
    }
  }

  /**
   * Acts on a claimed firing: the overlap guard, the notice, then the launch with every gate.
   * `queued`: the firing waited for the previous run (`overlap:queue`).
   */
  private async fire(schedule: ScheduleRow, firing: FiringRow, queued: boolean): Promise<void> {
    const { schedules, clock, logger } = this.deps;
    const running = await schedules.unfinishedRun(schedule.id);
    if (running) {
      const status = schedule.overlap === 'queue' ? 'waiting' : 'skipped';
      await schedules.settle(firing, { status, reason: 'overlap' });
      logger.info({ scheduleId: schedule.id, runId: running, status }, 'schedule slot overlaps its previous run');
      return;
    }
    const skippedSince = await schedules.skippedSinceLaunch(schedule.id);
    await this.notify(
      schedule,
      words.firingText(schedule, {
        lateMs: firing.manual ? 0 : firing.lateMs,
        lateAfterMs: this.deps.lateAfterMs ?? LATE_AFTER_MS,
        skippedSince,
        queued,
      }),
    );
    const result = await this.deps.handle(firingMessage(schedule, firing, clock.now()));
    if (result.kind === 'launched') {
      await schedules.settle(firing, { status: 'launched', runId: result.runId });
      return;
    }
    if (result.kind === 'duplicate') {
      // A node that died after launching the slot left it `claimed`: the run exists already.
      await schedules.settle(firing, { status: 'launched', reason: 'duplicate' });
      return;
    }
    const reason = result.kind === 'refused' ? result.code : result.kind === 'ignored' ? 'not_authorized' : result.kind;
    await schedules.settle(firing, { status: 'blocked', reason });
    logger.info({ scheduleId: schedule.id, reason }, 'schedule firing blocked');
    await this.notify(schedule, words.blockedText(schedule, reason));
  }

  /** A notice of the schedule's own, to its frozen conversation. */
  private async notify(schedule: ScheduleRow, body: string): Promise<void> {
    const { target } = schedule;
    await this.deps.outbox.send({
      runId: null,
      kind: 'reply',
      target: {
        platform: target.platform,
        chatId: target.chatId,
        ...(target.threadId ? { threadId: target.threadId } : {}),
        ...(target.replyToMessageId ? { replyToMessageId: target.replyToMessageId } : {}),
      },
      body,
    });
  }
}
