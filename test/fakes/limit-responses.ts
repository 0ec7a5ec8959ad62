/**
 * The answers the model APIs give when a subscription's usage limit is reached, for the fake
 * model servers (fake-openai.ts, fake-anthropic.ts). Shapes from the CLIs' own parsers and
 * public clients of the APIs, checked by running the pinned CLIs against them
 * (docs/vendors/quota.md has what each CLI prints for them):
 *
 * - OpenAI (ChatGPT-plan codex): status 429, body `{"error":{"type":"usage_limit_reached",
 *   "message", "plan_type", "resets_at" (epoch s), "resets_in_seconds"}}`, and the account's
 *   windows in `x-codex-primary-*` / `x-codex-secondary-*` headers (used percent, window
 *   minutes, reset-at epoch s, reset-after seconds).
 * - Anthropic (claude.ai plan): status 429, body `{"type":"error","error":{"type":
 *   "rate_limit_error","message"}}`, `retry-after` in seconds, and the plan's windows in
 *   `anthropic-ratelimit-unified-*` headers (status allowed / allowed_warning / rejected,
 *   reset epoch s, utilization as a fraction, the representative claim `five_hour`/`seven_day`).
 */
import type { FakeTurn } from './fake-openai.js';
import type { FakeAnthropicTurn } from './fake-anthropic.js';

/** One window of a plan as a fake reports it. */
export interface FakeWindow {
  /** Share of the window used, 0–100. */
  usedPercent: number;
  /** When it resets, epoch seconds. */
  resetAtSeconds: number;
}

/** Options of {@link codexUsageLimit}. */
export interface CodexLimitOptions {
  /** When the limit resets; omitted: the body carries no reset time. */
  resetAtSeconds?: number;
  /** @default 'plus' */
  planType?: string;
  /** The 7-day window's state. @default 40 % used, a day after the reset */
  secondary?: FakeWindow;
}

/** The `x-codex-*` headers of a 5-hour (primary) and a weekly (secondary) window. */
export function codexWindowHeaders(primary: FakeWindow, secondary: FakeWindow): Record<string, string> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {};
  for (const [name, window, minutes] of [
    ['primary', primary, 300],
    ['secondary', secondary, 10080],
  ] as const) {
    headers[`x-codex-${name}-used-percent`] = String(window.usedPercent);
    headers[`x-codex-${name}-window-minutes`] = String(minutes);
    headers[`x-codex-${name}-reset-at`] = String(window.resetAtSeconds);
    headers[`x-codex-${name}-reset-after-seconds`] = String(Math.max(0, window.resetAtSeconds - nowSeconds));
  }
  return headers;
}

/** A `POST /v1/responses` answer saying the ChatGPT plan's usage limit is reached. */
export function codexUsageLimit(options: CodexLimitOptions = {}): FakeTurn {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const reset = options.resetAtSeconds;
  const error: Record<string, unknown> = {
    type: 'usage_limit_reached',
    message: 'The usage limit has been reached',
    plan_type: options.planType ?? 'plus',
  };
  if (reset !== undefined) {
    error['resets_at'] = reset;
    error['resets_in_seconds'] = Math.max(0, reset - nowSeconds);
  }
  const primaryReset = reset ?? nowSeconds + 3600;
  const secondary = options.secondary ?? { usedPercent: 40, resetAtSeconds: primaryReset + 86_400 };
  return {
    kind: 'http_error',
    status: 429,
    body: JSON.stringify({ error }),
    headers: codexWindowHeaders({ usedPercent: 100, resetAtSeconds: primaryReset }, secondary),
  };
}

/** The `anthropic-ratelimit-unified-*` headers of the 5-hour and the 7-day window. */
export function anthropicWindowHeaders(fiveHour: FakeWindow, sevenDay: FakeWindow): Record<string, string> {
  const status = (w: FakeWindow): string =>
    w.usedPercent >= 100 ? 'rejected' : w.usedPercent >= 80 ? 'allowed_warning' : 'allowed';
  const worst = fiveHour.usedPercent >= sevenDay.usedPercent ? fiveHour : sevenDay;
  return {
    'anthropic-ratelimit-unified-status': status(worst),
    'anthropic-ratelimit-unified-reset': String(worst.resetAtSeconds),
    'anthropic-ratelimit-unified-representative-claim': worst === fiveHour ? 'five_hour' : 'seven_day',
    'anthropic-ratelimit-unified-5h-status': status(fiveHour),
    'anthropic-ratelimit-unified-5h-reset': String(fiveHour.resetAtSeconds),
    'anthropic-ratelimit-unified-5h-utilization': String(fiveHour.usedPercent / 100),
    'anthropic-ratelimit-unified-7d-status': status(sevenDay),
    'anthropic-ratelimit-unified-7d-reset': String(sevenDay.resetAtSeconds),
    'anthropic-ratelimit-unified-7d-utilization': String(sevenDay.usedPercent / 100),
    'anthropic-ratelimit-unified-overage-status': 'rejected',
    'anthropic-ratelimit-unified-overage-disabled-reason': 'org_level_disabled',
  };
}

/** A `POST /v1/messages` answer saying the claude.ai plan's 5-hour limit is reached. */
export function anthropicUsageLimit(resetAtSeconds: number): FakeAnthropicTurn {
  const nowSeconds = Math.floor(Date.now() / 1000);
  return {
    kind: 'http_error',
    status: 429,
    body: JSON.stringify({
      type: 'error',
      error: { type: 'rate_limit_error', message: "This request would exceed your account's rate limit." },
    }),
    headers: {
      'retry-after': String(Math.max(0, resetAtSeconds - nowSeconds)),
      ...anthropicWindowHeaders(
        { usedPercent: 100, resetAtSeconds },
        { usedPercent: 42, resetAtSeconds: resetAtSeconds + 86_400 },
      ),
    },
  };
}
