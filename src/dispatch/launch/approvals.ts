/**
 * Whether a launch runs with tool approvals. The two launch paths decide it by two different
 * rules, kept apart on purpose (making them one would change what a launch does):
 *
 * - {@link localApprovalRule} (a run on this node) reads the *resolved* posture — the launch's
 *   own, else its parent's sandbox — and turns approvals on only where this service has an
 *   approval broker and the platform can show approval cards; a launch that did not ask for
 *   `approve` then simply runs without them.
 * - {@link remoteApprovalRule} (a run routed to another node) reads only the launch's *own*
 *   posture (not the parent's), looks at neither the broker nor the platform, and refuses the
 *   launch whenever it would ask: an approval token lives only in the memory of the process that
 *   spawns, which is on the other node.
 */
import type { Platform } from '../../channels/types.js';
import { PLATFORM_ABILITIES } from '../../channels/types.js';
import { BatonError } from '../../core/errors.js';
import type { VendorName } from '../../core/vendor-name.js';
import { VENDOR_FACTS } from '../../harness/vendors/types.js';
import { APPROVALS_NOT_IN_FRONT_END, approvalsOnOtherNodeText } from '../../wording/launch-gates.js';
import type { RunRow } from '../../store/schema.js';
import { APPROVE_CODEX } from '../../wording/commands.js';
import type { LaunchOptions } from '../command.js';

/**
 * The approval rule of a run on this node: on when the vendor has tool approvals, the service has
 * an approval broker, the platform shows approval cards, and the launch asks — `approve`, a
 * parent that had `approve`, or a resolved `posture` (the launch's, else the parent's sandbox)
 * that the vendor asks in.
 *
 * @returns whether the run asks for approvals.
 * @throws BatonError `approvals_unavailable` when the launch said `approve` and the rule says no
 *   (for a vendor without tool approvals, {@link APPROVE_CODEX}).
 */
export function localApprovalRule(
  vendor: VendorName,
  options: LaunchOptions,
  parent: RunRow | undefined,
  posture: string | undefined,
  where: { hasBroker: boolean; platform: Platform },
): boolean {
  const facts = VENDOR_FACTS[vendor];
  // Tool approvals: claude runs in a mode that asks, or with `approve`.
  const approve =
    facts.toolApprovals &&
    where.hasBroker &&
    PLATFORM_ABILITIES[where.platform].toolApprovals &&
    (options.approve === true ||
      parent?.options.approve === true ||
      (posture !== undefined && facts.askingPostures.includes(posture)));
  if (options.approve && !approve) {
    throw new BatonError('approvals_unavailable', facts.toolApprovals ? APPROVALS_NOT_IN_FRONT_END : APPROVE_CODEX);
  }
  return approve;
}

/**
 * The approval rule of a run routed to another node: the run would ask when the vendor has tool
 * approvals and the launch asks — `approve`, a parent that had `approve`, or the launch's own
 * `posture:` (the parent's sandbox is not read) that the vendor asks in. Such a run is refused,
 * as is `approve` for a vendor without tool approvals.
 *
 * @throws BatonError `approvals_unavailable`.
 */
export function remoteApprovalRule(
  vendor: VendorName,
  options: LaunchOptions,
  parent: RunRow | undefined,
  node: string,
): void {
  const facts = VENDOR_FACTS[vendor];
  const approve =
    facts.toolApprovals &&
    (options.approve === true ||
      parent?.options.approve === true ||
      (options.posture !== undefined && facts.askingPostures.includes(options.posture)));
  if (approve || (options.approve && !facts.toolApprovals)) {
    throw new BatonError(
      'approvals_unavailable',
      !facts.toolApprovals ? APPROVE_CODEX : approvalsOnOtherNodeText(node),
    );
  }
}
