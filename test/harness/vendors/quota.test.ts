/**
 * Reading a plan's usage limit from the CLIs' own words and events. The lines are the ones the
 * pinned CLIs printed against the fake model servers (docs/vendors/quota.md).
 */
import { describe, expect, it } from 'vitest';
import { classifyExit } from '../../../src/harness/outcome.js';
import { claudeVendor } from '../../../src/harness/vendors/claude.js';
import { codexVendor } from '../../../src/harness/vendors/codex.js';
import { codexAppServerVendor } from '../../../src/harness/vendors/codex-app-server/vendor.js';
import { claudeRateLimitInfoOf, codexLimitOf } from '../../../src/harness/vendors/quota.js';

const exit1 = { exitCode: 1, signal: null, timedOut: false };
const LIMIT =
  'You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again';

/** The local instant of a wall-clock time, as codex writes it in the child's (this process's) zone. */
const local = (y: number, m: number, d: number, h: number, min: number): Date => new Date(y, m, d, h, min, 0, 0);

describe('codexLimitOf', () => {
  const now = local(2026, 11, 4, 2, 2);

  it('reads a bare time of day as today, rounded up to the next minute', () => {
    expect(codexLimitOf(`${LIMIT} at 3:02 AM.`, now)).toEqual({
      exhausted: true,
      resetsAt: local(2026, 11, 4, 3, 3).toISOString(),
    });
  });

  it('reads a bare time already past as that time tomorrow, and PM as the afternoon', () => {
    expect(codexLimitOf(`${LIMIT} at 1:15 AM.`, now)?.resetsAt).toBe(local(2026, 11, 5, 1, 16).toISOString());
    expect(codexLimitOf(`${LIMIT} at 12:02 PM.`, now)?.resetsAt).toBe(local(2026, 11, 4, 12, 3).toISOString());
    expect(codexLimitOf(`${LIMIT} at 12:30 AM.`, now)?.resetsAt).toBe(local(2026, 11, 5, 0, 31).toISOString());
  });

  it('reads a dated time', () => {
    expect(codexLimitOf(`${LIMIT} at Dec 6th, 2026 4:02 AM.`, now)?.resetsAt).toBe(
      local(2026, 11, 6, 4, 3).toISOString(),
    );
    expect(codexLimitOf(`${LIMIT} at Jan 1st, 2027 11:59 PM.`, now)?.resetsAt).toBe(
      local(2027, 0, 2, 0, 0).toISOString(),
    );
  });

  it('knows the limit without a time, and on the pro plan whose words differ', () => {
    expect(codexLimitOf(`${LIMIT} later.`, now)).toEqual({ exhausted: true });
    expect(
      codexLimitOf(
        'You’ve hit your usage limit. Visit https://chatgpt.com/settings/usage to purchase more credits or try again at 3:02 AM.',
        now,
      )?.resetsAt,
    ).toBe(local(2026, 11, 4, 3, 3).toISOString());
  });

  it('is no limit for an ordinary 429 or any other failure', () => {
    expect(codexLimitOf('exceeded retry limit, last status: 429 Too Many Requests', now)).toBeUndefined();
    expect(codexLimitOf('stream closed before response.completed', now)).toBeUndefined();
  });
});

describe('codex reducer at a usage limit', () => {
  it('ends the run quota_exhausted with the reset it read', () => {
    const reducer = codexVendor.newReducer();
    reducer.push({ type: 'thread.started', thread_id: '01a23ec9-bd38-7ea0-811b-fd42bd2fd94c' });
    reducer.push({ type: 'turn.started' });
    reducer.push({ type: 'error', message: `${LIMIT} at Dec 6th, 2026 4:02 AM.` });
    reducer.push({ type: 'turn.failed', error: { message: `${LIMIT} at Dec 6th, 2026 4:02 AM.` } });
    const classified = classifyExit(reducer.facts(), exit1);
    expect(classified).toMatchObject({
      status: 'failed',
      reason: 'quota_exhausted',
      quotaResetsAt: local(2026, 11, 6, 4, 3).toISOString(),
    });
  });

  it('keeps an ordinary 429 a vendor_error', () => {
    const reducer = codexVendor.newReducer();
    reducer.push({
      type: 'turn.failed',
      error: { message: 'exceeded retry limit, last status: 429 Too Many Requests' },
    });
    expect(classifyExit(reducer.facts(), exit1).reason).toBe('vendor_error');
  });
});

describe('codex app-server reducer at a usage limit', () => {
  /** A failed `turn/completed` notification, as codex app-server ends a turn. */
  const failedTurn = (message: string, codexErrorInfo: string | null) => ({
    method: 'turn/completed',
    params: {
      threadId: 't',
      turn: { id: '1', items: [], status: 'failed', error: { message, codexErrorInfo, additionalDetails: null } },
    },
  });

  it('ends the run quota_exhausted with the reset its words give, as codex exec does', () => {
    const reducer = codexAppServerVendor.newReducer();
    reducer.push(failedTurn(`${LIMIT} at Dec 6th, 2026 4:02 AM.`, 'usageLimitExceeded'));
    expect(classifyExit(reducer.facts(), exit1)).toMatchObject({
      status: 'failed',
      reason: 'quota_exhausted',
      quotaResetsAt: local(2026, 11, 6, 4, 3).toISOString(),
    });
  });

  it('knows the limit from the error info alone, without a reset, and keeps other failures vendor errors', () => {
    const limited = codexAppServerVendor.newReducer();
    limited.push(failedTurn('usage limit', 'usageLimitExceeded'));
    const classified = classifyExit(limited.facts(), exit1);
    expect(classified.reason).toBe('quota_exhausted');
    expect(classified.quotaResetsAt).toBeUndefined();
    const other = codexAppServerVendor.newReducer();
    other.push(failedTurn('exceeded retry limit, last status: 429 Too Many Requests', 'rateLimitExceeded'));
    expect(classifyExit(other.facts(), exit1).reason).toBe('vendor_error');
  });
});

// claude 2.1.332 under a subscription login, its 5-hour window rejected (reset 1796353410).
const rejectedInfo = {
  status: 'rejected',
  resetsAt: 1796353410,
  rateLimitType: 'five_hour',
  overageStatus: 'rejected',
  isUsingOverage: false,
  unifiedWindows: {
    five_hour: { utilization: 1, resetsAt: 1796353410, status: 'rejected' },
    seven_day: { utilization: 0.42, resetsAt: 1796439810, status: 'allowed' },
  },
};

describe('claude reducer at a usage limit', () => {
  it('ends the run quota_exhausted at the rejected window’s reset and keeps the windows', () => {
    const reducer = claudeVendor.newReducer();
    reducer.push({ type: 'system', subtype: 'init', session_id: '500b326b-ab4f-4db6-9883-a517335477a4' });
    reducer.push({ type: 'rate_limit_event', rate_limit_info: rejectedInfo, session_id: 's' });
    reducer.push({
      type: 'assistant',
      message: {
        model: '<synthetic>',
        content: [{ type: 'text', text: "You've hit your 5-hour limit · resets 3:03am (UTC)" }],
      },
      error: 'rate_limit',
      api_error: 'usage_limit_reached',
      api_error_params: { rate_limit_info: { status: 'rejected', resetsAt: 1796353410, rateLimitType: 'five_hour' } },
    });
    reducer.push({
      type: 'result',
      subtype: 'success',
      is_error: true,
      api_error_status: 429,
      api_error: 'usage_limit_reached',
      result: "You've hit your 5-hour limit · resets 3:03am (UTC)",
      usage: { input_tokens: 0, output_tokens: 0 },
    });
    const facts = reducer.facts();
    expect(facts.quota).toEqual({
      exhausted: true,
      resetsAt: '2026-12-04T03:03:30.000Z',
      windows: [
        { name: 'five_hour', usedPercent: 100, resetsAt: '2026-12-04T03:03:30.000Z' },
        { name: 'seven_day', usedPercent: 42, resetsAt: '2026-12-05T03:03:30.000Z' },
      ],
    });
    expect(classifyExit(facts, exit1)).toMatchObject({
      reason: 'quota_exhausted',
      quotaResetsAt: '2026-12-04T03:03:30.000Z',
      errorMessage: "You've hit your 5-hour limit · resets 3:03am (UTC)",
    });
  });

  it('keeps an API key’s 429 (no api_error) a vendor_error, and a window report on a completed run is no limit', () => {
    const keyed = claudeVendor.newReducer();
    keyed.push({
      type: 'result',
      subtype: 'success',
      is_error: true,
      api_error_status: 429,
      result: "API Error: Request rejected (429) · This request would exceed your account's rate limit.",
    });
    expect(classifyExit(keyed.facts(), exit1).reason).toBe('vendor_error');

    const warned = claudeVendor.newReducer();
    warned.push({
      type: 'rate_limit_event',
      rate_limit_info: {
        status: 'allowed',
        resetsAt: 1796353460,
        unifiedWindows: { five_hour: { utilization: 0.85, resetsAt: 1796353460 } },
      },
    });
    warned.push({ type: 'result', subtype: 'success', is_error: false, result: 'ok' });
    expect(warned.facts().quota).toEqual({
      exhausted: false,
      windows: [{ name: 'five_hour', usedPercent: 85, resetsAt: '2026-12-04T03:04:20.000Z' }],
    });
    expect(classifyExit(warned.facts(), { ...exit1, exitCode: 0 }).reason).toBeNull();
  });

  it('ignores rate-limit info that is not an object or has no usable figures', () => {
    expect(claudeRateLimitInfoOf('rejected')).toBeUndefined();
    expect(claudeRateLimitInfoOf({ unifiedWindows: { five_hour: { utilization: -1 } }, resetsAt: 'soon' })).toEqual({
      windows: [],
    });
  });
});
