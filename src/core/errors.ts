/**
 * The one error type baton raises on purpose. Every refusal and failure a user can see carries a
 * stable {@link ErrorCode}: codes are API, stored in the database and asserted in tests, while the
 * message is prose for people that always says how to fix the problem.
 */

/** Stable error codes. Adding one is fine; renaming one breaks stored rows and tests. */
export type ErrorCode =
  // configuration
  | 'config_invalid'
  | 'config_unreadable'
  | 'env_invalid'
  | 'port_unavailable'
  | 'service_enabled'
  | 'service_running'
  | 'service_lock_busy'
  | 'service_not_running'
  | 'root_too_broad'
  // storage
  | 'database_unavailable'
  | 'migration_failed'
  // launch gates, in gate order
  | 'harness_disabled'
  | 'not_approved'
  | 'vendor_missing'
  | 'not_authorized'
  | 'outside_workspace'
  | 'cwd_holds_config'
  | 'cwd_missing'
  | 'posture_refused'
  | 'resume_refused'
  | 'quota_exceeded'
  | 'free_space_low'
  | 'storage_unprobeable'
  | 'worktree_busy'
  | 'max_active'
  | 'duplicate_inbound'
  // a queued or routed run's row at spawn (src/dispatch/spawn-gates.ts)
  | 'option_refused'
  | 'cap_missing'
  // command parsing
  | 'usage'
  | 'unknown_alias'
  | 'forwarded_message'
  | 'attachment_refused'
  | 'voice_refused'
  | 'voice_failed'
  | 'attachment_download_failed'
  | 'text_unstorable'
  | 'schedule_unknown'
  // spawning and runs
  | 'spawn_failed'
  | 'approvals_unavailable'
  | 'user_unresolved'
  | 'task_too_long'
  | 'git_failed'
  | 'patch_unavailable'
  | 'worktree_refused'
  | 'worktree_gone'
  | 'worktree_locked'
  | 'worktree_branch_busy'
  | 'queue_full'
  /** The vendor is at its plan's usage limit and the launch cannot wait for the reset. */
  | 'quota_exhausted'
  | 'launch_stopped'
  // fleet
  | 'node_unknown'
  | 'node_unavailable'
  | 'node_name_taken'
  // channels
  | 'channel_refused'
  | 'channel_network'
  | 'channel_conflict';

/** Options accepted by {@link BatonError}. */
export interface BatonErrorOptions {
  /** The underlying error, kept for logs; never shown to chat users. */
  cause?: unknown;
  /** Structured facts for logs and tests (file, key, path…). Must never hold a secret. */
  details?: Record<string, unknown>;
}

/**
 * An expected failure with a stable code and a user-facing message that says the fix.
 *
 * @example
 * throw new BatonError('not_approved', 'Coding agents are not yet approved on this machine. …');
 */
export class BatonError extends Error {
  override readonly name = 'BatonError';
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: BatonErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = options.details ?? {};
  }
}

/** True when `err` is a {@link BatonError}, optionally with the given code. */
export function isBatonError(err: unknown, code?: ErrorCode): err is BatonError {
  return err instanceof BatonError && (code === undefined || err.code === code);
}

/**
 * Marks a branch the type checker proves unreachable; throws if reached at runtime anyway
 * (e.g. a database row holding a status this build does not know).
 *
 * @throws Error always.
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`Unexpected ${what}: ${JSON.stringify(value)}`);
}
