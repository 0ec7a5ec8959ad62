/**
 * Usage figures at the vendor parse boundary: a resumed codex session's cumulative totals become
 * the run's own usage, and figures no CLI could mean (negative, fractional, past a safe integer)
 * are recorded as unknown, with the reason for the log.
 */
import { describe, expect, it } from 'vitest';
import { claudeVendor } from '../../src/harness/vendors/claude.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';

const turn = (usage: Record<string, unknown>) => [
  { type: 'thread.started', thread_id: 't1' },
  { type: 'turn.started' },
  { type: 'item.completed', item: { id: 'i', type: 'agent_message', text: 'done' } },
  { type: 'turn.completed', usage },
];

describe('codex usage', () => {
  it('counts a resumed run’s own tokens: codex reports the whole session’s totals on resume', () => {
    // Measured on the pinned codex against the fake model server: a parent of 1,000 in + 500 out,
    // then a resume of two model requests of the same size, reports 3,000 in + 1,500 out.
    const reducer = codexVendor.newReducer({
      sessionUsageBefore: { inputTokens: 1000, cachedInputTokens: 100, outputTokens: 500, reasoningOutputTokens: 20 },
    });
    for (const e of turn({
      input_tokens: 3000,
      cached_input_tokens: 300,
      output_tokens: 1500,
      reasoning_output_tokens: 60,
    }))
      reducer.push(e);
    const facts = reducer.facts();
    expect(facts.usage).toEqual({
      inputTokens: 2000,
      cachedInputTokens: 200,
      outputTokens: 1000,
      reasoningOutputTokens: 40,
      session: { inputTokens: 3000, cachedInputTokens: 300, outputTokens: 1500, reasoningOutputTokens: 60 },
    });
    expect(facts.live?.tokens).toBe(3000);
  });

  it('keeps a first run’s usage as reported, with the session totals beside it', () => {
    const reducer = codexVendor.newReducer();
    for (const e of turn({
      input_tokens: 1000,
      cached_input_tokens: 0,
      output_tokens: 500,
      reasoning_output_tokens: 0,
    }))
      reducer.push(e);
    expect(reducer.facts().usage).toMatchObject({
      inputTokens: 1000,
      outputTokens: 500,
      session: { inputTokens: 1000, outputTokens: 500 },
    });
  });

  it.each([
    [{ input_tokens: -5, output_tokens: 10 }, /input_tokens/],
    [{ input_tokens: 1.5, output_tokens: 10 }, /input_tokens/],
    [{ input_tokens: 10, output_tokens: 1e300 }, /output_tokens/],
    [{ input_tokens: '10', output_tokens: 10 }, /input_tokens/],
  ])('records %j as unknown usage with the reason', (usage, why) => {
    const reducer = codexVendor.newReducer();
    for (const e of turn(usage)) reducer.push(e);
    const facts = reducer.facts();
    expect(facts.usage).toBeUndefined();
    expect(facts.usageInvalid).toMatch(why);
    expect(facts.terminal).toEqual({ kind: 'completed' });
  });

  it('records unknown usage when a resume reports less than the session had before', () => {
    const reducer = codexVendor.newReducer({
      sessionUsageBefore: { inputTokens: 5000, cachedInputTokens: 0, outputTokens: 500 },
    });
    for (const e of turn({ input_tokens: 1000, output_tokens: 600 })) reducer.push(e);
    expect(reducer.facts().usage).toBeUndefined();
    expect(reducer.facts().usageInvalid).toMatch(/fewer tokens than it had before/);
  });
});

describe('claude usage', () => {
  it('records a negative token count as unknown usage with the reason', () => {
    const reducer = claudeVendor.newReducer();
    reducer.push({ type: 'system', subtype: 'init', session_id: 's1' });
    reducer.push({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'ok',
      session_id: 's1',
      usage: { input_tokens: -1000, output_tokens: 5 },
      total_cost_usd: 0.01,
    });
    const facts = reducer.facts();
    expect(facts.usage).toBeUndefined();
    expect(facts.usageInvalid).toMatch(/input_tokens/);
  });

  it('records a negative cost as unknown usage', () => {
    const reducer = claudeVendor.newReducer();
    reducer.push({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'ok',
      session_id: 's1',
      usage: { input_tokens: 10, output_tokens: 5 },
      total_cost_usd: -3,
    });
    expect(reducer.facts().usage).toBeUndefined();
    expect(reducer.facts().usageInvalid).toMatch(/cost/);
  });
});
