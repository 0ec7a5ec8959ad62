/** The refusals of the dispatcher's launch gates (launch/ in dispatch). */

/** A launch before the owner approved coding agents on this machine. */
export const NOT_APPROVED =
  'Coding agents are not yet approved on this machine. Approve with `baton approve` (or set [harness] approved = true), then send the command again.';

/** `approve` where this front end cannot show approval cards (or the service has no broker). */
export const APPROVALS_NOT_IN_FRONT_END = 'Tool approvals are not available in this front end; launch without approve.';

/** A run that would ask for tool approvals, routed to `node`. */
export function approvalsOnOtherNodeText(node: string): string {
  return `Tool approvals are not available for runs on another node (${node}) yet. Launch without approve (or in another mode), or on this node.`;
}

/** Images sent with a run routed to `node`. */
export function imagesToOtherNodeText(node: string): string {
  return `Images cannot go to a run on another node (${node}) yet: they are files on this node's disk. Send text files, or launch on this node.`;
}

/** A resume of the run tagged `tag` that never got a `vendor` session. */
export function noSessionToResumeText(tag: string, vendor: string): string {
  return `${tag} has no ${vendor} session to resume (it never reached the CLI). Start a new run instead.`;
}
