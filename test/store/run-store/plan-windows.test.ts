/** The plan windows the CLIs reported: stored per node and vendor, each period warned once. */
import { describe, expect, it } from 'vitest';
import { RunStore } from '../../../src/store/runs-repo.js';
import { testEngine, useTestDatabase } from '../../support/database.js';

const RESET = new Date('2026-12-04T07:00:00.000Z');
const NEXT = new Date('2026-12-04T12:00:00.000Z');

describe(`plan windows on ${testEngine}`, () => {
  const database = useTestDatabase();

  it('stores the latest report and claims each period’s warning once, also for a second node’s report', async () => {
    const store = new RunStore(database.db);
    const at = (iso: string) => new Date(iso);
    const five = (usedPercent: number, resetsAt = RESET) => ({ window: 'five_hour', usedPercent, resetsAt });
    expect(await store.planWindows.record('n1', 'claude', [five(50)], at('2026-12-04T05:00:00Z'), 80)).toEqual([]);
    expect(await store.planWindows.record('n1', 'claude', [five(85)], at('2026-12-04T05:10:00Z'), 80)).toEqual([
      five(85),
    ]);
    expect(await store.planWindows.record('n1', 'claude', [five(95)], at('2026-12-04T05:20:00Z'), 80)).toEqual([]);
    // A report older than the stored one does not replace it.
    await store.planWindows.record('n1', 'claude', [five(10)], at('2026-12-04T05:15:00Z'), 80);
    expect((await store.planWindows.onNode('n1')).map((r) => [r.window, r.usedPercent])).toEqual([['five_hour', 95]]);
    // The next period warns again; another node has its own rows.
    expect(await store.planWindows.record('n1', 'claude', [five(81, NEXT)], at('2026-12-04T07:10:00Z'), 80)).toEqual([
      five(81, NEXT),
    ]);
    expect(await store.planWindows.record('n2', 'claude', [five(90)], at('2026-12-04T05:30:00Z'), 80)).toEqual([
      five(90),
    ]);
  });
});
