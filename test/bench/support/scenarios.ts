/**
 * The bench scenarios: each file under test/bench/ and the id its report is saved under. Used by
 * the vitest config (`BENCH_ONLY`, set by `npm run bench -- --only NAME`) and by the smoke check at
 * teardown (every selected scenario ran and reported its figures).
 */

/** One scenario: its file `test/bench/<file>.bench.ts` and its report id in bench/results.json. */
export interface BenchScenario {
  file: string;
  id: string;
}

/**
 * Every scenario, in the order a full run runs them (test/bench/vitest.config.ts): the figures
 * that are absolute times and CPU shares (start, idle) on a machine that has not yet run anything
 * heavy; the stream ingest (2 GiB written), the delivery drain (a million-row table) and the soak
 * last, as their database and page-cache write-back goes on after they end.
 */
export const BENCH_SCENARIOS: readonly BenchScenario[] = [
  { file: 'start-time', id: 'start_time' },
  { file: 'idle', id: 'idle_cost' },
  { file: 'embedded-db', id: 'embedded_db' },
  { file: 'dispatch-overhead', id: 'dispatch_overhead' },
  { file: 'repo-size', id: 'repo_size' },
  { file: 'stream-ingest', id: 'stream_ingest' },
  { file: 'delivery', id: 'delivery_throughput' },
  { file: 'soak', id: 'soak' },
];

/** The file names of {@link BENCH_SCENARIOS}, in their run order. */
export const BENCH_RUN_ORDER: readonly string[] = BENCH_SCENARIOS.map((s) => s.file);

/** Where `moduleId` (a path ending in `<file>.bench.ts`) comes in {@link BENCH_RUN_ORDER}; unknown files last. */
export function runOrderOf(moduleId: string): number {
  const index = BENCH_RUN_ORDER.findIndex((file) => moduleId.endsWith(`/${file}.bench.ts`));
  return index === -1 ? BENCH_RUN_ORDER.length : index;
}

/**
 * The scenarios named in `only`: comma-separated file names (`delivery`) or ids
 * (`delivery_throughput`); every scenario when `only` is empty or undefined.
 *
 * @throws {Error} naming the unknown scenario and listing the known ones.
 */
export function selectScenarios(only: string | undefined): BenchScenario[] {
  const names = (only ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  if (names.length === 0) return [...BENCH_SCENARIOS];
  return names.map((name) => {
    const found = BENCH_SCENARIOS.find((s) => s.file === name || s.id === name || `${s.file}.bench.ts` === name);
    if (!found) {
      throw new Error(
        `BENCH_ONLY: unknown bench scenario "${name}"; known: ${BENCH_SCENARIOS.map((s) => `${s.file} (${s.id})`).join(', ')}`,
      );
    }
    return found;
  });
}
