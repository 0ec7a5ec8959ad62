import { describe, expect, it } from 'vitest';
import { collectGarbageNow } from '../../src/core/memory.js';

describe('collectGarbageNow', () => {
  it('frees unreachable objects at once and leaves no gc global behind', () => {
    // ~20 MB of objects that become garbage before the call.
    let garbage: { n: number; s: string }[] | undefined = Array.from({ length: 200_000 }, (_, n) => ({
      n,
      s: `item-${n}-${'x'.repeat(40)}`,
    }));
    expect(garbage.length).toBe(200_000);
    garbage = undefined;
    const freed = collectGarbageNow();
    expect(freed.heapUsedBeforeBytes - freed.heapUsedAfterBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    // A second call reuses the collector.
    expect(collectGarbageNow().heapUsedAfterBytes).toBeGreaterThan(0);
  });
});
