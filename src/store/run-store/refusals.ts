/**
 * The launch refusals the store raises, as facts: a stable code and the numbers or paths behind
 * it (`details.refusal`). The sentence a person reads is built from those facts by the wording
 * (`wording/launch-refusals.ts`); the message here is for logs.
 */
import { BatonError } from '../../core/errors.js';
import type { LaunchRefusal } from '../../types/launch-refusal.js';

function refused(refusal: LaunchRefusal, extra: Record<string, unknown> = {}): BatonError {
  return new BatonError(refusal.code, `launch refused: ${refusal.code}`, { details: { ...extra, refusal } });
}

/** `max_active`: this node already runs `maxActive` runs. */
export function maxActiveRefusal(maxActive: number): BatonError {
  return refused({ code: 'max_active', scope: 'node', limit: maxActive });
}

/** `max_active`: the fleet already runs `fleetMaxActive` runs. */
export function fleetMaxActiveRefusal(fleetMaxActive: number): BatonError {
  return refused({ code: 'max_active', scope: 'fleet', limit: fleetMaxActive });
}

/** `worktree_busy`: run `runId` (when known) is active in worktree root `root`. */
export function worktreeBusyRefusal(root: string, runId?: string): BatonError {
  return refused({ code: 'worktree_busy', worktreeRoot: root, ...(runId ? { runId } : {}) }, { worktreeRoot: root });
}

/** `queue_full`: the conversation already holds `maxQueued` queued runs. */
export function queueFullRefusal(maxQueued: number): BatonError {
  return refused({ code: 'queue_full', limit: maxQueued });
}

/** `duplicate_inbound`: the inbound event a launch answers was already acted on. */
export function duplicateInbound(): BatonError {
  return refused({ code: 'duplicate_inbound' });
}
