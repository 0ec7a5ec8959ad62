/**
 * The sentences of the launch refusals the store raises (`max_active`, `worktree_busy`,
 * `queue_full`, `duplicate_inbound`), built from the facts it attaches.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { LaunchRefusal } from '../types/launch-refusal.js';

/** The sentence a person reads for `refusal`; each says how to get past it. */
export function launchRefusalText(refusal: LaunchRefusal): string {
  switch (refusal.code) {
    case 'max_active':
      return refusal.scope === 'fleet'
        ? `${refusal.limit} coding run${refusal.limit === 1 ? ' is' : 's are'} already active across the fleet (fleet_max_active = ${refusal.limit}). ` +
            'Wait for one to finish, /cancel one, or raise [node] fleet_max_active on every node and restart them.'
        : `${refusal.limit} coding run${refusal.limit === 1 ? ' is' : 's are'} already active (max_active = ${refusal.limit}). ` +
            'Wait for one to finish, /cancel one, or raise [harness] max_active and restart.';
    case 'worktree_busy':
      return `Another run is active in ${refusal.worktreeRoot}${refusal.runId ? ` (${refusal.runId})` : ''}. Wait for it to finish or /cancel it.`;
    case 'queue_full':
      return `${refusal.limit} run${refusal.limit === 1 ? ' is' : 's are'} already queued in this conversation (max_queued = ${refusal.limit}). Wait for one to start, /cancel one, or raise [harness] max_queued and restart.`;
    case 'duplicate_inbound':
      return 'This message was already acted on.';
  }
}

/**
 * `err` with its sentence when it is a launch refusal of the store (a {@link BatonError} whose
 * `details.refusal` holds the facts): the same code, details and cause, the message from
 * {@link launchRefusalText}. Any other error comes back as it is.
 */
export function wordLaunchRefusal(err: unknown): unknown {
  if (!isBatonError(err)) return err;
  const refusal = err.details?.refusal as LaunchRefusal | undefined;
  if (!refusal) return err;
  return new BatonError(err.code, launchRefusalText(refusal), {
    details: err.details,
    ...(err.cause !== undefined ? { cause: err.cause } : {}),
  });
}
