import { describe, expect, it } from 'vitest';
import { BENCH_RUN_ORDER, BENCH_SCENARIOS, runOrderOf, selectScenarios } from './scenarios.js';

describe('bench scenario order', () => {
  it('runs every scenario once: no file or id is listed twice', () => {
    expect(new Set(BENCH_RUN_ORDER).size).toBe(BENCH_SCENARIOS.length);
    expect(new Set(BENCH_SCENARIOS.map((s) => s.id)).size).toBe(BENCH_SCENARIOS.length);
  });

  it('sorts the selected files so the start and idle figures come before the heavy writers', () => {
    const files = selectScenarios(undefined).map((s) => `/work/baton/test/bench/${s.file}.bench.ts`);
    const sorted = [...files].sort((a, b) => runOrderOf(a) - runOrderOf(b));
    const order = sorted.map((f) => f.replace(/^.*\/(.+)\.bench\.ts$/, '$1'));
    expect(order.indexOf('start-time')).toBeLessThan(order.indexOf('soak'));
    expect(order.indexOf('idle')).toBeLessThan(order.indexOf('delivery'));
    expect(order.indexOf('start-time')).toBeLessThan(order.indexOf('stream-ingest'));
    expect(order).toEqual([...BENCH_RUN_ORDER]);
  });

  it('puts a file it does not know last, and never mistakes a name for a suffix of another', () => {
    expect(runOrderOf('/x/test/bench/new-one.bench.ts')).toBe(BENCH_RUN_ORDER.length);
    expect(runOrderOf('/x/test/bench/not-soak.bench.ts')).toBe(BENCH_RUN_ORDER.length);
  });
});
