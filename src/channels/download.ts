/**
 * Downloading a platform's file for a task: one way to tell a failure that a
 * retry can fix (the network, a 5xx, a 429 with its `Retry-After`) from one it cannot (404, 403, a
 * file too large for the platform, an expired file reference), so `harness/attachments.ts` retries
 * the first kind with backoff and answers the second at once, each with a one-line reason.
 */
import { Readable } from 'node:stream';
import { AttachmentDownloadError } from '../core/download-error.js';
import { safeErrorMessage } from '../core/logger.js';

export { AttachmentDownloadError, MAX_DOWNLOAD_RETRY_AFTER_MS } from '../core/download-error.js';

/**
 * The failure an HTTP answer other than 2xx means (RFC 9110: 408, 429 and 5xx are worth another
 * try; 429 and 503 may carry `Retry-After`, in seconds or as an HTTP date).
 *
 * @param platform the platform's name for the reason, e.g. `Discord`.
 */
export function httpDownloadFailure(
  status: number,
  retryAfter: string | null,
  platform: string,
): AttachmentDownloadError {
  if (status === 429)
    return new AttachmentDownloadError(`${platform} rate-limited the download (HTTP 429)`, {
      transient: true,
      status,
      retryAfterMs: parseRetryAfter(retryAfter),
    });
  if (status >= 500 || status === 408)
    return new AttachmentDownloadError(`${platform} failed to serve it (HTTP ${status})`, {
      transient: true,
      status,
      retryAfterMs: parseRetryAfter(retryAfter),
    });
  if (status === 404 || status === 410)
    return new AttachmentDownloadError(`${platform} no longer has it (HTTP ${status}; its link may have expired)`, {
      transient: false,
      status,
    });
  if (status === 401 || status === 403)
    return new AttachmentDownloadError(`${platform} refused the download (HTTP ${status})`, {
      transient: false,
      status,
    });
  return new AttachmentDownloadError(`the download answered HTTP ${status}`, { transient: false, status });
}

/** A request that got no answer (connection refused or cut, DNS, TLS): worth another try. */
export function networkDownloadFailure(
  err: unknown,
  redact: (text: string) => string = (t) => t,
): AttachmentDownloadError {
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return new AttachmentDownloadError(redact(`the network failed (${safeErrorMessage(err)}${cause})`), {
    transient: true,
  });
}

/**
 * GETs `url` and returns the body as a stream.
 *
 * @throws AttachmentDownloadError classified by {@link httpDownloadFailure} or {@link networkDownloadFailure}.
 */
export async function fetchDownload(
  url: string | URL,
  init: RequestInit,
  platform: string,
  redact?: (text: string) => string,
): Promise<Readable> {
  let response: Response;
  try {
    response = await fetch(url, init);
  } catch (err) {
    throw networkDownloadFailure(err, redact);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel().catch(() => undefined);
    throw httpDownloadFailure(response.status, response.headers.get('retry-after'), platform);
  }
  return Readable.fromWeb(response.body as never);
}

/** `Retry-After` in ms (seconds, or an HTTP date), or undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
