#!/usr/bin/env node
/**
 * `npm run bench [-- --only NAME[,NAME…]] [vitest options]`: runs the benchmarks through vitest.
 * `--only` sets `BENCH_ONLY` (which also works on its own), keeping the named scenarios, by file
 * name without `.bench.ts` (`delivery`, `dispatch-overhead`, `embedded-db`, `idle`, `repo-size`, `soak`, `start-time`,
 * `stream-ingest`) or by report id (`delivery_throughput`, …); test/bench/vitest.config.ts rejects
 * an unknown name. Other arguments go to vitest. Sizes stay overridable by `BENCH_<NAME>`
 * variables (test/bench/support/results.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const passOn = [];
let only = process.env.BENCH_ONLY ?? '';
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--only') {
    only = args[++i] ?? '';
    if (only === '' || only.startsWith('-')) {
      console.error('bench: --only needs a scenario name, e.g. --only delivery');
      process.exit(2);
    }
  } else if (arg.startsWith('--only=')) {
    only = arg.slice('--only='.length);
  } else {
    passOn.push(arg);
  }
}
// A smoke whose figure check fails leaves its problems here (test/bench/support/global-setup.ts):
// vitest exits 0 after an error in a global teardown, so this is what fails the run.
const smokeProblems = fileURLToPath(new URL('../../bench/smoke-problems.txt', import.meta.url));
rmSync(smokeProblems, { force: true });
const vitest = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const result = spawnSync(process.execPath, [vitest, 'run', '--config', 'test/bench/vitest.config.ts', ...passOn], {
  cwd: root,
  env: { ...process.env, BENCH_ONLY: only },
  stdio: 'inherit',
});
if (existsSync(smokeProblems)) {
  console.error(`bench smoke failed:\n${readFileSync(smokeProblems, 'utf8')}`);
  process.exit(1);
}
process.exit(result.status ?? 1);
