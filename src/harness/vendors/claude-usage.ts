/**
 * Claude Code's token and cost figures: a `usage` object as baton's {@link UsageJson}, the cost of
 * a result since the previous one, and the run's sum over its results.
 */
import type { UsageJson } from '../../store/schema.js';
import { isInvalidUsage, readCostFigure, readTokenFigures, type InvalidUsage } from './usage-figures.js';
import { isRecord } from './claude-events.js';

/** Sum of `costUSD` over the models of 2.1.332's `model_usage_since_last_result`, or undefined without it. */
export function costSinceLastResult(raw: unknown): number | undefined | InvalidUsage {
  if (!isRecord(raw)) return undefined;
  let sum = 0;
  for (const model of Object.values(raw)) {
    const cost = isRecord(model) ? readCostFigure(model['costUSD'], 'costUSD') : undefined;
    if (isInvalidUsage(cost)) return cost;
    if (cost !== undefined) sum += cost;
  }
  return sum;
}

/** Two usages added figure by figure; `a` undefined gives `b`. */
export function addUsage(a: UsageJson | undefined, b: UsageJson): UsageJson {
  if (!a) return b;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  };
}

/**
 * A `usage` object of an `assistant` message or a `result`: `inputTokens` counts every prompt
 * token (uncached, cache writes and cache reads), `cachedInputTokens` the cache reads; a figure
 * no CLI could mean gives {@link InvalidUsage}.
 */
export function readUsage(u: Record<string, unknown>): UsageJson | InvalidUsage {
  const figures = readTokenFigures(u, [
    'input_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
    'output_tokens',
  ] as const);
  if (isInvalidUsage(figures)) return figures;
  const usage: UsageJson = {
    inputTokens: figures.input_tokens + figures.cache_creation_input_tokens + figures.cache_read_input_tokens,
    cachedInputTokens: figures.cache_read_input_tokens,
    outputTokens: figures.output_tokens,
  };
  return usage;
}
