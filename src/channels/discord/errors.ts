/**
 * Discord REST failures → {@link ChannelSendError}. Discord API facts: "Rate Limits" (HTTP 429,
 * `Retry-After` / `retry_after` in seconds; @discordjs/rest raises `RateLimitError` with
 * `retryAfter` in ms when `rejectOnRateLimit` says so), "JSON Error Codes" (50035 Invalid Form
 * Body, e.g. content over 2000 characters; 50006 empty message; 50007 cannot message this user;
 * 50001 Missing Access; 50013 Missing Permissions; 10003 Unknown Channel).
 */
import { DiscordAPIError, DiscordjsError, DiscordjsErrorCodes, HTTPError, RateLimitError } from 'discord.js';
import { ChannelSendError } from '../types.js';
import { safeErrorMessage } from '../../core/logger.js';
import { discordGatewayClosed, discordTokenRefused } from '../../wording/channels.js';

/** JSON error codes that mean the payload itself is wrong: reshape, never resend unchanged. */
const MALFORMED_CODES = new Set([50035, 50006, 40005]);
/** Wait when a 429 carries no usable retry time, in ms. */
const DEFAULT_RETRY_AFTER_MS = 30_000;

/**
 * Classifies a failed Discord REST call.
 *
 * @param what - the operation, for the message (e.g. `create message`).
 * @param token - the bot token, scrubbed from every message.
 */
export function classifyDiscordError(err: unknown, what: string, token: string): ChannelSendError {
  if (err instanceof RateLimitError) {
    const waitMs = Math.max(err.retryAfter, err.timeToReset);
    return new ChannelSendError(
      'rate_limited',
      redact(`Discord ${what}: rate limited on ${err.route} for ${waitMs}ms`, token),
      {
        cause: err,
        retryAfterMs: waitMs > 0 ? waitMs : DEFAULT_RETRY_AFTER_MS,
      },
    );
  }
  if (err instanceof DiscordAPIError) {
    const message = redact(`Discord ${what}: ${err.status} ${String(err.code)} ${err.message}`, token);
    if (err.status === 429) {
      const seconds = (err.rawError as { retry_after?: number }).retry_after;
      return new ChannelSendError('rate_limited', message, {
        cause: err,
        retryAfterMs: seconds !== undefined ? Math.ceil(seconds * 1000) : DEFAULT_RETRY_AFTER_MS,
      });
    }
    if (typeof err.code === 'number' && MALFORMED_CODES.has(err.code))
      return new ChannelSendError('malformed', message, { cause: err });
    if (err.status === 413) return new ChannelSendError('malformed', message, { cause: err });
    if (err.status >= 500) return new ChannelSendError('network', message, { cause: err });
    return new ChannelSendError('refused', message, { cause: err });
  }
  if (err instanceof HTTPError) {
    const message = redact(`Discord ${what}: HTTP ${err.status} ${err.message}`, token);
    return new ChannelSendError(err.status >= 500 || err.status === 408 ? 'network' : 'refused', message, {
      cause: err,
    });
  }
  if (err instanceof DiscordjsError && err.code === DiscordjsErrorCodes.TokenInvalid) {
    return new ChannelSendError('refused', `Discord ${what}: ${discordTokenRefused}`);
  }
  // @discordjs/ws rejects a login the gateway closed for good with these plain errors.
  const closed = err instanceof Error ? GATEWAY_ERRORS.get(err.message) : undefined;
  if (closed !== undefined) return new ChannelSendError('refused', `Discord ${what}: ${discordGatewayClosed(closed)}`);
  // The cause is dropped on purpose: a transport error may quote a request with its headers.
  const detail = describeDiscordError(err, token);
  if (UNREACHABLE.test(detail))
    return new ChannelSendError('network', `Discord ${what} failed: Discord unreachable (${detail})`);
  // A TypeError or RangeError thrown inside the client library (its HTTP client failing on a
  // file's body, say: "action is not a function") is no network failure: the same request fails
  // the same way every time. Refused, so the outbox goes on without the file, or dead-letters
  // a text part at once, instead of retrying it for a day.
  if (err instanceof TypeError || err instanceof RangeError) {
    return new ChannelSendError('refused', `Discord ${what} failed inside the client library: ${detail}`);
  }
  return new ChannelSendError('network', `Discord ${what} failed: ${detail}`);
}

/** Node's words for a host that cannot be reached (DNS or TCP), as undici and `net` report them. */
const UNREACHABLE =
  /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|UND_ERR_CONNECT_TIMEOUT)\b|fetch failed/;

/** Errors @discordjs/ws raises for gateway close codes, by message. */
const GATEWAY_ERRORS = new Map([
  ['Authentication failed', 4004],
  ['Used disallowed intents', 4014],
]);

/** A one-line, token-free description of any error, for logs and channel status. */
export function describeDiscordError(err: unknown, token: string): string {
  return redact(safeErrorMessage(err), token);
}

/** Replaces the token in `text` with `[redacted]`. */
export function redact(text: string, token: string): string {
  return token ? text.split(token).join('[redacted]') : text;
}
