/** What a press does: one handler a button. */
import { BUTTON_GONE } from '../../wording/presses.js';
import type { InboundPress } from '../../channels/types.js';
import { APPROVAL_ACTIONS } from '../../harness/approvals.js';
import { redeliver } from '../commands/redeliver.js';
import type { DispatchContext } from '../context.js';
import { RESTORE_WORKTREE_ACTION } from '../worktree-gone.js';
import { pressApproval } from './approval.js';
import { pressExtend } from './extend.js';
import { FIX_ACTION } from '../../core/buttons.js';
import { pressFix } from './fix.js';
import { pressKeep } from './keep.js';
import type { PressAnswer } from './outcome.js';
import { pressRestore } from './restore-worktree.js';
import { QUOTA_ACTIONS } from '../../harness/run/judge.js';
import { pressRunAtReset, pressRunOn } from './quota.js';
import { pressResume } from './resume.js';
import { pressSchedule } from './schedule.js';
import { pressStop } from './stop.js';
import { VOICE_ACTIONS } from '../inbound/voice.js';
import { pressVoiceEdit, pressVoiceRun } from './voice.js';

/** What a press does; @returns the short answer the presser sees, `done` when it decided something. */
export async function actOnPress(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const { deps } = ctx;
  switch (press.action) {
    case APPROVAL_ACTIONS.allow:
    case APPROVAL_ACTIONS.allow_run:
    case APPROVAL_ACTIONS.deny:
      return pressApproval(deps, press, press.action);
    case 'redeliver':
      return redeliver(deps, press.arg);
    case 'keep':
      return pressKeep();
    case 'extend':
      return pressExtend(deps, press);
    case 'resume':
      return pressResume(ctx, press);
    case FIX_ACTION:
      return pressFix(ctx, press);
    case RESTORE_WORKTREE_ACTION:
      return pressRestore(deps, press);
    case 'stop':
      return pressStop(deps, press);
    case VOICE_ACTIONS.run:
      return pressVoiceRun(ctx, press);
    case VOICE_ACTIONS.edit:
      return pressVoiceEdit(ctx, press);
    case 'sched_pause':
    case 'sched_resume':
    case 'sched_delete':
    case 'sched_run':
      return pressSchedule(deps, press, press.action);
    case QUOTA_ACTIONS.runAtReset:
      return pressRunAtReset(ctx, press);
    case QUOTA_ACTIONS.runOn:
      return pressRunOn(ctx, press);
  }
  return BUTTON_GONE;
}
