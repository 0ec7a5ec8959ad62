import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { runOrderOf, selectScenarios } from './support/scenarios.js';

/** Runs the scenario files in {@link runOrderOf}'s order, not vitest's (slowest first by cache). */
class ScenarioOrder extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    return Promise.resolve([...files].sort((a, b) => runOrderOf(a.moduleId) - runOrderOf(b.moduleId)));
  }
}

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The benchmarks: `npx vitest run --config test/bench/vitest.config.ts` (full sizes, writes
 * bench/results.json), with `BENCH_SMOKE=1` for the CI smoke (small sizes, bench/results.smoke.json).
 * One file at a time: scenarios measure time, memory and CPU, and must not compete with each other.
 * `BENCH_ONLY=NAME[,NAME…]` (what `npm run bench -- --only NAME` sets) keeps the named scenarios.
 */
export default defineConfig({
  root,
  test: {
    include: selectScenarios(process.env.BENCH_ONLY).map((s) => `test/bench/${s.file}.bench.ts`),
    globalSetup: ['test/support/global-setup.ts', 'test/bench/support/global-setup.ts'],
    setupFiles: ['test/support/git-host.ts'],
    fileParallelism: false,
    sequence: { sequencer: ScenarioOrder },
    maxWorkers: 1,
    // A full scenario runs for many minutes (the soak, 2 × 200 × 2 real CLI runs).
    testTimeout: 4 * 3_600_000,
    hookTimeout: 600_000,
  },
});
