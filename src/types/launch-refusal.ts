/**
 * Why the store refused a launch, as plain facts: the store raises them, the wording turns them
 * into the sentence a person reads.
 */

/** One launch refusal: its stable error code and the facts behind it. */
export type LaunchRefusal =
  /** `scope`: whose `max_active` cap is reached, this node's or the fleet's; `limit`: that cap. */
  | { code: 'max_active'; scope: 'node' | 'fleet'; limit: number }
  /** `runId`: the active run holding `worktreeRoot`, when known. */
  | { code: 'worktree_busy'; worktreeRoot: string; runId?: string }
  /** `limit`: the conversation's `max_queued`. */
  | { code: 'queue_full'; limit: number }
  | { code: 'duplicate_inbound' };
