/** The buttons under an approval message and the actions they carry. */
import type { ButtonJson } from '../core/buttons.js';
import type { ApprovalDecision } from '../store/approvals-repo.js';
import { alwaysAsks } from './approval-scope.js';
import type { ApprovalButtonLabels } from './ports.js';

/** Button actions of an approval message; the argument is the approval id. */
export const APPROVAL_ACTIONS = { allow: 'allow', allow_run: 'allow_run', deny: 'deny' } as const satisfies Record<
  string,
  ApprovalDecision
>;

/** The buttons under an approval message, labelled with `labels`; a call of a `kind` that always asks has no "for this run". */
export function approvalButtons(labels: ApprovalButtonLabels, approvalId: number, kind = ''): ButtonJson[] {
  const arg = String(approvalId);
  return [
    { label: labels.allow, action: APPROVAL_ACTIONS.allow, arg },
    // A call that always asks offers no rule for later calls.
    ...(alwaysAsks(kind) ? [] : [{ label: labels.allowForRun, action: APPROVAL_ACTIONS.allow_run, arg }]),
    { label: labels.deny, action: APPROVAL_ACTIONS.deny, arg },
  ];
}
