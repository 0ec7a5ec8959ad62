/**
 * A failed download of a file that goes with a task, as every part that touches one tells it:
 * the adapters that download, the harness that retries, the dispatcher that answers.
 */
import { BatonError } from './errors.js';

/** Longest `Retry-After` honoured, in ms; a longer one still waits only this long. */
export const MAX_DOWNLOAD_RETRY_AFTER_MS = 10_000;

/**
 * A failed download of an attachment. Its message is the reason in a few words, without the file's
 * name (the caller names it) and without any token.
 */
export class AttachmentDownloadError extends BatonError {
  /** Whether trying again later can succeed (network, 5xx, 429). */
  readonly transient: boolean;
  /** How long the platform asked to wait before trying again, in ms (429 `Retry-After`). */
  readonly retryAfterMs: number | undefined;
  /** What the owner can do, one sentence. @default "Send it again." */
  readonly fix: string;
  /** The HTTP status of the answer, when there was one. */
  readonly status: number | undefined;

  constructor(
    message: string,
    options: { transient: boolean; retryAfterMs?: number | undefined; fix?: string; status?: number; cause?: unknown },
  ) {
    super('attachment_download_failed', message, options.cause === undefined ? {} : { cause: options.cause });
    this.transient = options.transient;
    this.retryAfterMs = options.retryAfterMs;
    this.fix = options.fix ?? 'Send it again.';
    this.status = options.status;
  }
}
