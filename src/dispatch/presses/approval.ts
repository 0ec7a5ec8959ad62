/** Allow, Allow for this run and Deny under an approval card. */
import { APPROVAL_NOT_KNOWN } from '../../wording/presses.js';
import type { InboundPress } from '../../channels/types.js';
import type { APPROVAL_ACTIONS } from '../../harness/approvals.js';
import type { DispatcherDeps } from '../deps.js';
import { parseSerialId } from '../serial-id.js';
import { inConversation, type PressAnswer } from './outcome.js';

/** A decision an approval card's button makes. */
export type ApprovalAction = (typeof APPROVAL_ACTIONS)[keyof typeof APPROVAL_ACTIONS];

/** Decides, by `action` (the press's own), the approval the press names (one of this conversation's runs). */
export async function pressApproval(
  deps: DispatcherDeps,
  press: InboundPress,
  action: ApprovalAction,
): Promise<PressAnswer> {
  const approvalId = parseSerialId(press.arg);
  const approval = deps.approvals && approvalId !== undefined ? await deps.approvals.approval(approvalId) : undefined;
  const run = approval ? await deps.store.runs.getRun(approval.runId) : undefined;
  if (!approval || !run || !inConversation(press, run)) return APPROVAL_NOT_KNOWN;
  // Decided now, already, or its run ended: the card's buttons do nothing more either way.
  return {
    text: await deps.approvals!.press(approval.id, action, `${press.platform}:${press.senderId}`),
    done: true,
  };
}
