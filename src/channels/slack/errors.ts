/**
 * Slack Web API failures → {@link ChannelSendError}. Slack API facts: "Rate limits" (HTTP 429 with
 * `Retry-After` in seconds; @slack/web-api raises `WebAPIRateLimitedError.retryAfter` in seconds
 * when `rejectRateLimitedCalls` is set), `chat.postMessage` errors (`msg_too_long`, `no_text`,
 * `channel_not_found`, `not_in_channel`, …), and "Web API basics": any other non-200 status is an
 * HTTP failure.
 */
import { webApi } from '@slack/bolt';
import { ChannelSendError } from '../types.js';
import { safeErrorMessage } from '../../core/logger.js';

/** Platform error codes that mean the payload itself is wrong: reshape it, never resend it as is. */
const MALFORMED = new Set([
  'msg_too_long',
  'no_text',
  'invalid_blocks',
  'invalid_blocks_format',
  'too_many_attachments',
  'invalid_arguments',
  'invalid_form_data',
  'invalid_json',
]);
/** Platform error codes that are Slack's own trouble: a later retry can succeed. */
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited']);
/** Wait when Slack says `ratelimited` without a usable `Retry-After`, in ms. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

/**
 * Classifies a failed Web API call.
 *
 * @param method - the Web API method, for the message (e.g. `chat.postMessage`).
 * @param secrets - values to scrub from the message (tokens, signing secret).
 */
export function classifySlackError(err: unknown, method: string, secrets: readonly string[]): ChannelSendError {
  if (err instanceof webApi.WebAPIRateLimitedError) {
    return new ChannelSendError(
      'rate_limited',
      redact(`Slack ${method}: rate limited for ${err.retryAfter}s`, secrets),
      {
        cause: err,
        retryAfterMs: err.retryAfter * 1000,
      },
    );
  }
  if (err instanceof webApi.WebAPIPlatformError) {
    const code = err.data.error;
    const message = redact(`Slack ${method}: ${code}`, secrets);
    if (code === 'ratelimited') {
      const seconds = err.data.response_metadata?.retryAfter;
      return new ChannelSendError('rate_limited', message, {
        cause: err,
        retryAfterMs: seconds !== undefined ? seconds * 1000 : DEFAULT_RETRY_AFTER_MS,
      });
    }
    if (MALFORMED.has(code)) return new ChannelSendError('malformed', message, { cause: err });
    if (TRANSIENT.has(code)) return new ChannelSendError('network', message, { cause: err });
    return new ChannelSendError('refused', message, { cause: err });
  }
  if (err instanceof webApi.WebAPIHTTPError) {
    const message = redact(`Slack ${method}: HTTP ${err.statusCode} ${err.statusMessage}`, secrets);
    if (err.statusCode === 429)
      return new ChannelSendError('rate_limited', message, { cause: err, retryAfterMs: DEFAULT_RETRY_AFTER_MS });
    return new ChannelSendError(err.statusCode >= 500 ? 'network' : 'refused', message, { cause: err });
  }
  // The cause is dropped on purpose: a transport error may quote a URL or a header.
  const where = err instanceof webApi.WebAPIRequestError ? 'unreachable' : 'failed';
  return new ChannelSendError('network', `Slack ${method} ${where}: ${describeSlackError(err, secrets)}`);
}

/** A one-line, secret-free description of any error, for logs and channel status. */
export function describeSlackError(err: unknown, secrets: readonly string[]): string {
  if (err instanceof webApi.WebAPIPlatformError) return redact(err.data.error, secrets);
  if (err instanceof webApi.WebAPIRequestError) return redact(err.original.message || err.message, secrets);
  return redact(safeErrorMessage(err), secrets);
}

/** Replaces every secret value in `text` with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}
