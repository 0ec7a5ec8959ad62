/** Pause, Resume, Run now and Delete, under a schedule in `/schedules`. */
import type { InboundPress } from '../../channels/types.js';
import { isBatonError } from '../../core/errors.js';
import { BUTTON_GONE } from '../../wording/presses.js';
import * as words from '../../wording/schedules.js';
import { changeSchedule } from '../commands/schedule.js';
import type { DispatcherDeps } from '../deps.js';
import type { PressAnswer } from './outcome.js';

/** The button actions of a schedule, each the change it makes. */
export const SCHEDULE_ACTIONS = {
  sched_pause: 'pause',
  sched_resume: 'resume',
  sched_delete: 'unschedule',
  sched_run: 'run',
} as const;

/**
 * Acts on a schedule's button. Run now records a `requested` firing that the next node to look
 * launches, through every gate, as for a slot.
 */
export async function pressSchedule(
  deps: DispatcherDeps,
  press: InboundPress,
  action: keyof typeof SCHEDULE_ACTIONS,
): Promise<PressAnswer> {
  const store = deps.schedules;
  if (!store) return BUTTON_GONE;
  const now = deps.clock.now();
  const node = deps.fleet?.name ?? 'local';
  const verb = SCHEDULE_ACTIONS[action];
  try {
    if (verb !== 'run')
      return { text: await changeSchedule(store, press.arg, verb, now, node), done: verb === 'unschedule' };
    const schedule = await store.get(press.arg);
    if (!schedule || schedule.state === 'deleted') return words.scheduleUnknown(press.arg);
    await store.request(schedule.id, node, now);
    return words.runNowText(schedule);
  } catch (err) {
    if (isBatonError(err, 'schedule_unknown')) return err.message;
    throw err;
  }
}
