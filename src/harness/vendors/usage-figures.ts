/**
 * Usage figures as a CLI reports them, checked where they are parsed: they come from a model
 * server, which baton does not control, and they decide the `tokens:` cap and what an outcome
 * says was spent. A figure no CLI could mean is never counted as 0 or as sent.
 */
import type { UsageJson } from '../../store/schema.js';

/** Figures that cannot be counted, with why (for the log line). */
export interface InvalidUsage {
  invalid: string;
}

/**
 * Reads token counts `keys` of `raw`: an absent field counts 0 (CLIs omit the ones they do not
 * track); a present one must be a non-negative safe integer.
 *
 * @returns the counts by key, or why one cannot be counted.
 */
export function readTokenFigures<K extends string>(
  raw: Record<string, unknown>,
  keys: readonly K[],
): Record<K, number> | InvalidUsage {
  const counts = {} as Record<K, number>;
  for (const key of keys) {
    const value = raw[key];
    if (value === undefined || value === null) counts[key] = 0;
    else if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) counts[key] = value;
    else return { invalid: `${key} is ${describe(value)}, not a non-negative whole number` };
  }
  return counts;
}

/**
 * A dollar figure: a finite non-negative number.
 *
 * @returns the figure, undefined when absent, or why it cannot be counted.
 */
export function readCostFigure(value: unknown, name: string): number | undefined | InvalidUsage {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  return { invalid: `${name} is ${describe(value)}, not a non-negative cost` };
}

/** True for {@link InvalidUsage}. */
export function isInvalidUsage(value: unknown): value is InvalidUsage {
  return typeof value === 'object' && value !== null && 'invalid' in value;
}

/**
 * The run's own usage from a resumed session's totals: codex-cli 0.171.0 reports on `resume`
 * the whole session's tokens (measured against the fake model server: a 1,500-token parent and
 * a 3,000-token resume report 4,500), so the session's totals before the run are subtracted.
 *
 * @param before the session's totals when the run began ({@link UsageJson.session} of its parent).
 * @returns the run's own usage with `session` set to the reported totals, or why it cannot be
 *   counted (a total below the one before: not the session this run resumed).
 */
export function ownUsage(session: Omit<UsageJson, 'session'>, before: UsageJson | undefined): UsageJson | InvalidUsage {
  const base = before?.session ?? before;
  const own = (key: 'inputTokens' | 'cachedInputTokens' | 'outputTokens' | 'reasoningOutputTokens'): number =>
    (session[key] ?? 0) - (base?.[key] ?? 0);
  const usage: UsageJson = {
    inputTokens: own('inputTokens'),
    cachedInputTokens: own('cachedInputTokens'),
    outputTokens: own('outputTokens'),
    session: { ...session },
  };
  if (session.reasoningOutputTokens !== undefined) usage.reasoningOutputTokens = own('reasoningOutputTokens');
  if (
    usage.inputTokens < 0 ||
    usage.outputTokens < 0 ||
    usage.cachedInputTokens < 0 ||
    (usage.reasoningOutputTokens ?? 0) < 0
  ) {
    return { invalid: 'the resumed session reported fewer tokens than it had before this run' };
  }
  return usage;
}

function describe(value: unknown): string {
  return typeof value === 'number'
    ? String(value)
    : typeof value === 'string'
      ? `the text ${JSON.stringify(value.slice(0, 40))}`
      : typeof value;
}
