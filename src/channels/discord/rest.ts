/**
 * The options of Discord's REST client (@discordjs/rest), shared by baton's own client (sends,
 * edits, press answers) and the one inside each gateway `Client`.
 */

/** Rate-limit waits up to this long are absorbed by @discordjs/rest; longer ones go back to the outbox, in ms. */
const INLINE_RATE_LIMIT_WAIT_MS = 5_000;

/**
 * `api` when a base other than Discord's is set, and `rejectOnRateLimit`: a wait over
 * {@link INLINE_RATE_LIMIT_WAIT_MS} is thrown (a `RateLimitError`) instead of waited out.
 *
 * @param apiUrl - REST API base, e.g. a fake's. @default https://discord.com/api
 */
export function discordRestOptions(apiUrl: string | undefined): {
  api?: string;
  rejectOnRateLimit: (data: { retryAfter: number; timeToReset: number }) => boolean;
} {
  return {
    ...(apiUrl ? { api: apiUrl } : {}),
    rejectOnRateLimit: (data) => Math.max(data.retryAfter, data.timeToReset) > INLINE_RATE_LIMIT_WAIT_MS,
  };
}
