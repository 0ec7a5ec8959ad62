/**
 * `/every`, `/at`, `/schedules`, `/unschedule`, `/pause` and `/resume`. Only the owner reaches
 * the changing ones (act.ts refuses guests, strangers and forwarded messages first); what a
 * schedule will launch is checked now, and again by every gate when it fires.
 */
import { CHANNEL_PLATFORMS, type BatonConfig } from '../../config/index.js';
import { PLATFORM_ABILITIES, type InboundMessage } from '../../channels/types.js';
import type { ButtonJson } from '../../core/buttons.js';
import { BatonError } from '../../core/errors.js';
import { newScheduleId } from '../../core/ids.js';
import type { ScheduleStore } from '../../store/schedules-repo.js';
import type { ScheduleRow, ScheduleTargetJson } from '../../store/schema.js';
import { UNKNOWN_COMMAND } from '../../wording/dispatch.js';
import * as words from '../../wording/schedules.js';
import { parseCommand, type ScheduleVerb } from '../command.js';
import type { DispatchContext } from '../context.js';
import { ANSWERED, type DispatchResult } from '../deps.js';
import { whenOf } from '../schedules/firing.js';
import { nameOfTask, parseAt, parseEvery, type ScheduleRequest } from '../schedules/grammar.js';
import { latestDueSlot, nextSlot } from '../schedules/slots.js';

/**
 * A schedule command; where coding agents are disabled (or there is no schedule store) it is
 * answered as an unknown command.
 *
 * @throws BatonError `usage` for a malformed schedule, `schedule_unknown` for an unknown id.
 */
export async function scheduleCommand(
  ctx: DispatchContext,
  command: { verb: ScheduleVerb; rest: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  const store = ctx.deps.schedules;
  if (!store || !ctx.config.harness.enabled) {
    await ctx.reply(message, UNKNOWN_COMMAND);
    return { kind: 'refused', code: 'harness_disabled' };
  }
  const now = ctx.deps.clock.now();
  switch (command.verb) {
    case 'every':
    case 'at': {
      const parse = command.verb === 'every' ? parseEvery : parseAt;
      const row = await createSchedule(store, ctx.config, parse(command.rest, now, ctx.config.schedules.timezone), {
        message,
        now,
      });
      await ctx.reply(message, words.scheduleCreatedText(factsOf(row, now)));
      return ANSWERED;
    }
    case 'list':
      return listSchedules(ctx, store, message, now);
    case 'pause':
    case 'resume':
    case 'unschedule':
      await ctx.reply(message, await changeSchedule(store, command.rest, command.verb, now));
      return ANSWERED;
  }
}

/**
 * Stores a new schedule whose runs go to `from.message`'s conversation, or to `request.to`.
 *
 * @throws BatonError `usage` when the command is no launch, or `to:` names an unconfigured platform.
 */
export async function createSchedule(
  store: ScheduleStore,
  config: BatonConfig,
  request: ScheduleRequest,
  from: { message?: InboundMessage; now: Date },
): Promise<ScheduleRow> {
  const launch = parseCommand(request.command);
  if (launch.kind !== 'launch') throw new BatonError('usage', words.NOT_A_LAUNCH);
  const { target, ownerId } = targetOf(config, request, from.message);
  return store.create({
    id: newScheduleId(),
    name: request.name ?? nameOfTask(launch.task),
    cron: request.when.cron,
    runAt: request.when.runAt,
    timezone: request.when.timezone,
    until: request.when.until,
    overlap: request.overlap,
    command: request.command,
    target,
    ownerId,
    state: 'active',
    createdAt: from.now,
  });
}

/** Where the schedule's runs go, frozen now, and the owner they are launched as. */
function targetOf(
  config: BatonConfig,
  request: ScheduleRequest,
  message: InboundMessage | undefined,
): { target: ScheduleTargetJson; ownerId: string } {
  if (request.to) {
    const { platform, chatId } = request.to;
    const owner = (CHANNEL_PLATFORMS as readonly string[]).includes(platform)
      ? config.channels[platform as keyof BatonConfig['channels']].owner
      : undefined;
    if (owner === undefined) throw new BatonError('usage', words.toNotConfigured(platform));
    return { target: { platform, chatId }, ownerId: owner };
  }
  // The local terminal (the one platform whose every sender is the owner) keeps no conversation
  // a later firing could deliver to.
  if (!message || PLATFORM_ABILITIES[message.platform].senderIsOwner) throw new BatonError('usage', words.NEEDS_TO);
  return {
    target: {
      platform: message.platform,
      chatId: message.chatId,
      ...(message.threadId ? { threadId: message.threadId } : {}),
      replyToMessageId: message.messageId,
    },
    ownerId: message.senderId,
  };
}

/** The facts the texts show of `row`, without its last firing. */
export function factsOf(row: ScheduleRow, now: Date, last?: words.ScheduleFacts['last']): words.ScheduleFacts {
  return { ...row, next: nextSlot(whenOf(row), now), last };
}

/** `/schedules`: one message per schedule, with its buttons. */
async function listSchedules(
  ctx: DispatchContext,
  store: ScheduleStore,
  message: InboundMessage,
  now: Date,
): Promise<DispatchResult> {
  const rows = await store.list();
  if (rows.length === 0) {
    await ctx.reply(message, words.NO_SCHEDULES);
    return ANSWERED;
  }
  for (const row of rows) {
    const last = await store.lastFiring(row.id);
    await ctx.reply(message, words.scheduleLine(factsOf(row, now, last)), scheduleButtons(row));
  }
  return ANSWERED;
}

/** Pause (or Resume) · Run now · Delete, for a schedule that can still fire. */
export function scheduleButtons(row: Pick<ScheduleRow, 'id' | 'state'>): ButtonJson[] {
  const { pause, resume, runNow } = words.SCHEDULE_BUTTONS;
  const toggle =
    row.state === 'active'
      ? [{ label: pause, action: 'sched_pause', arg: row.id }]
      : row.state === 'paused'
        ? [{ label: resume, action: 'sched_resume', arg: row.id }]
        : [];
  return [
    ...toggle,
    { label: runNow, action: 'sched_run', arg: row.id },
    { label: words.SCHEDULE_BUTTONS.delete, action: 'sched_delete', arg: row.id },
  ];
}

/**
 * Pauses, resumes or deletes schedule `id`. A resumed schedule does not fire the slots it
 * missed while paused: the latest of them is recorded `missed`.
 *
 * @returns the answer.
 * @throws BatonError `schedule_unknown` when no schedule `id` exists (or it was deleted).
 */
export async function changeSchedule(
  store: ScheduleStore,
  id: string,
  verb: 'pause' | 'resume' | 'unschedule',
  now: Date,
  node = 'local',
): Promise<string> {
  const existing = await store.get(id);
  if (!existing || existing.state === 'deleted') throw new BatonError('schedule_unknown', words.scheduleUnknown(id));
  const [state, from, said] =
    verb === 'pause'
      ? (['paused', ['active'], 'paused'] as const)
      : verb === 'resume'
        ? (['active', ['paused'], 'resumed'] as const)
        : (['deleted', ['active', 'paused', 'expired', 'done'], 'deleted'] as const);
  const changed = await store.setState(id, state, from);
  if (!changed) return words.scheduleIsText(existing);
  if (verb === 'resume') {
    const last = await store.lastFiring(id, true);
    const since = last && last.slotAt > changed.createdAt ? last.slotAt : changed.createdAt;
    const missed = latestDueSlot(whenOf(changed), now, since);
    if (missed) await store.claim({ scheduleId: id, slotAt: missed, node, now }, 'missed');
  }
  return words.scheduleStateText(changed, said);
}
