/**
 * GroupCommit (src/store/group-commit.ts): batches form behind the write in flight, and a failed
 * batch is written again one item at a time only for errors that prove nothing was written.
 */
import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.js';

/** A batch writer whose calls the test settles by hand. */
function heldWriter(): {
  calls: { items: readonly number[]; settle(err?: unknown): void }[];
  write(items: readonly number[]): Promise<number[]>;
} {
  const calls: { items: readonly number[]; settle(err?: unknown): void }[] = [];
  return {
    calls,
    write: (items) =>
      new Promise<number[]>((resolve, reject) => {
        calls.push({ items, settle: (err) => (err ? reject(err) : resolve(items.map((i) => i * 10))) });
      }),
  };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommit', () => {
  it('writes a lone item at once and the items that came meanwhile as one batch of at most maxBatch', async () => {
    const writer = heldWriter();
    const group = new GroupCommit(writer.write, { maxBatch: 3, retryAlone: () => true });
    const results = [1, 2, 3, 4, 5, 6].map((i) => group.submit(i));
    await tick();
    expect(writer.calls.map((c) => c.items)).toEqual([[1]]);
    writer.calls[0]!.settle();
    await tick();
    expect(writer.calls.map((c) => c.items)).toEqual([[1], [2, 3, 4]]);
    writer.calls[1]!.settle();
    await tick();
    writer.calls[2]!.settle();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60]);
    expect(writer.calls.map((c) => c.items)).toEqual([[1], [2, 3, 4], [5, 6]]);
  });

  it('fails every item of a batch, without writing any again, when the error may have committed it', async () => {
    const writer = heldWriter();
    const lost = Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' });
    const group = new GroupCommit(writer.write, { maxBatch: 10, retryAlone: (err) => err !== lost });
    const first = group.submit(1);
    const batch = [2, 3].map((i) => group.submit(i));
    await tick();
    writer.calls[0]!.settle();
    await first;
    await tick();
    writer.calls[1]!.settle(lost);
    for (const result of await Promise.allSettled(batch)) expect(result).toEqual({ status: 'rejected', reason: lost });
    expect(writer.calls).toHaveLength(2);
  });

  it('writes each item of a refused batch alone and fails only the one refused again', async () => {
    const writer = heldWriter();
    const refused = Object.assign(new Error('foreign key'), { code: '23503' });
    const group = new GroupCommit(writer.write, { maxBatch: 10, retryAlone: (err) => err === refused });
    const first = group.submit(1);
    const batch = Promise.allSettled([2, 3, 4].map((i) => group.submit(i)));
    await tick();
    writer.calls[0]!.settle();
    await first;
    await tick();
    writer.calls[1]!.settle(refused);
    for (const [item, fails] of [
      [2, false],
      [3, true],
      [4, false],
    ] as const) {
      await tick();
      expect(writer.calls.at(-1)!.items).toEqual([item]);
      writer.calls.at(-1)!.settle(fails ? refused : undefined);
    }
    expect((await batch).map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });
});
