/**
 * vitest globalSetup of the benchmarks (after test/support/global-setup.ts, which installs the
 * pinned CLIs): clears parts left by an interrupted run; at teardown merges the scenario reports
 * into the results file and prints the table. A smoke run (`BENCH_SMOKE=1`) then fails unless every
 * selected scenario saved a report with its figures present; it never checks a timing.
 */
import { execFileSync } from 'node:child_process';
import postgres from 'postgres';
import { loadavg } from 'node:os';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clearParts, formatTable, machineInfo, mergeParts, missingFigures, REPO_ROOT, SMOKE } from './results.js';
import { selectScenarios } from './scenarios.js';

/** Where a failed smoke check leaves its problems for test/bench/run.mjs (which removes it first). */
const SMOKE_PROBLEMS_FILE = join(REPO_ROOT, 'bench', 'smoke-problems.txt');

export default async function setup(): Promise<() => Promise<void>> {
  const machine = machineInfo();
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    const dirty =
      execFileSync('git', ['status', '--porcelain', '--', 'src'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim() !== '';
    machine.commit = `${head}${dirty ? '+dirty' : ''}`;
    // Workers are forked after this setup and inherit it (as test/support/global-setup.ts relies on).
    process.env.BENCH_COMMIT = machine.commit;
  } catch {
    // not a git checkout
  }
  if (process.env.DATABASE_URL) {
    const sql = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql<{ version: string }[]>`select version()`;
      if (row) machine.postgres = row.version;
    } finally {
      await sql.end({ timeout: 5 });
    }
  }
  await clearParts();
  return async () => {
    machine.loadAverageAtEnd = loadavg().map((l) => Math.round(l * 100) / 100);
    const { path, file, ranNow } = await mergeParts(machine);
    if (SMOKE) {
      const problems = missingFigures(
        selectScenarios(process.env.BENCH_ONLY).map((s) => s.id),
        ranNow,
        file.scenarios,
      );
      if (problems.length > 0) {
        // vitest 4 reports an error thrown here ("error during close") but exits 0, so the
        // problems also go to a file that test/bench/run.mjs turns into exit code 1.
        await writeFile(SMOKE_PROBLEMS_FILE, `${problems.join('\n')}\n`);
        throw new Error(`bench smoke: ${problems.join('; ')}`);
      }
    }
    if (ranNow.length === 0) {
      console.log('bench: no scenario finished; results file left as it was');
      return;
    }
    const reports = ranNow.map((id) => file.scenarios[id]!);
    console.log(
      `\nbaton bench (${SMOKE ? 'smoke' : 'full'}) · ${machine.cores} cores · ${machine.memoryTotalMb} MiB · Node ${machine.node} · load at start ${machine.loadAverageAtStart.join('/')}, at end ${machine.loadAverageAtEnd.join('/')}`,
    );
    console.log(formatTable(reports));
    console.log(`\nwrote ${path}`);
  };
}
