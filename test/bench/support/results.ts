/**
 * What a bench scenario reports, and how reports become `bench/results.json` and a table.
 *
 * Each scenario file saves its report as a part (`bench/.parts/<id>.json`); the global teardown
 * (test/bench/support/global-setup.ts) merges the parts into the results file, keeping entries of
 * scenarios that did not run this time, and prints the table. Full runs write
 * `bench/results.json`, smoke runs (`BENCH_SMOKE=1`) `bench/results.smoke.json`, so a CI smoke never
 * overwrites measured numbers; `BENCH_OUT` names another file (relative to the repo root).
 */
import { statSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, freemem, loadavg, release, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitForQuietMachine, type QuietWait } from './quiet.js';

/** The repository root (three levels above this file). */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** True when `BENCH_SMOKE=1`: small sizes, a few seconds per scenario. */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/**
 * A size for the current mode; `BENCH_<NAME>` in the environment overrides both (e.g.
 * `BENCH_DISPATCH_RUNS=50`).
 */
export function size(name: string, full: number, smoke: number): number {
  const override = process.env[`BENCH_${name}`];
  if (override !== undefined && override !== '') {
    const parsed = Number(override);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`BENCH_${name}=${override} is not a positive number`);
    return parsed;
  }
  return SMOKE ? smoke : full;
}

/** One number compared with its target. */
export interface TargetCheck {
  /** What is measured, e.g. `codex p95 ratio`. */
  metric: string;
  /** The measured value; null when it could not be measured. */
  value: number | null;
  /** Unit of `value`, e.g. `ms`, `MB/s`, `×`. */
  unit: string;
  /** The target as text, e.g. `≤ 1.10`. */
  target: string;
  met: boolean;
}

/** One scenario's report. */
export interface ScenarioReport {
  /** Stable key, e.g. `dispatch_overhead`. */
  id: string;
  title: string;
  mode: 'smoke' | 'full';
  /** ISO time the scenario finished. */
  ranAt: string;
  /** Wall time of the scenario, in ms. */
  durationMs: number;
  /** 1-minute load average when the scenario started and ended: the machine is shared. */
  loadAverage: { atStart: number; atEnd: number };
  /** The wait for a quiet machine before the scenario began (full runs only; the smoke does not wait). */
  quietBeforeStart?: QuietWait;
  /** The commit checked out when the bench started, and when dist/ (what `baton start` runs) was last built. */
  build?: { commit: string | undefined; distBuiltAt: string | undefined };
  /** Measured numbers, scenario-specific (units in the key names). */
  numbers: Record<string, unknown>;
  checks: TargetCheck[];
  /** Anything that missed its target and why, and how the numbers were taken. */
  notes: string[];
}

/** The whole results file. */
export interface ResultsFile {
  generatedAt: string;
  machine: MachineInfo;
  scenarios: Record<string, ScenarioReport>;
}

/** The machine the numbers come from. */
export interface MachineInfo {
  cores: number;
  cpuModel: string;
  memoryTotalMb: number;
  memoryFreeMbAtStart: number;
  /** 1/5/15-minute load average when the bench started: the machine is shared. */
  loadAverageAtStart: number[];
  /** The same when the bench ended (set at teardown). */
  loadAverageAtEnd?: number[];
  node: string;
  kernel: string;
  platform: string;
  /** `select version()` of the PostgreSQL server at `DATABASE_URL`, when set. */
  postgres?: string;
  /** The commit the bench ran on (`git rev-parse HEAD`), `+dirty` when src/ had local changes. */
  commit?: string;
}

/** Facts about this machine, taken now. */
export function machineInfo(): MachineInfo {
  const cpu = cpus();
  return {
    cores: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryTotalMb: Math.round(totalmem() / 1_048_576),
    memoryFreeMbAtStart: Math.round(freemem() / 1_048_576),
    loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    node: process.version,
    kernel: release(),
    platform: `${process.platform}-${process.arch}`,
  };
}

const PARTS_DIR = join(REPO_ROOT, 'bench', '.parts');

/** Where this mode's results go. */
export function resultsPath(): string {
  const out = process.env.BENCH_OUT;
  if (out) return resolve(REPO_ROOT, out);
  return join(REPO_ROOT, 'bench', SMOKE ? 'results.smoke.json' : 'results.json');
}

/** A scenario being measured; {@link RunningScenario.save} completes its report. */
export interface RunningScenario {
  save(result: Pick<ScenarioReport, 'numbers' | 'checks' | 'notes'>): Promise<ScenarioReport>;
}

/**
 * Starts the clock of scenario `id`, once the machine is quiet ({@link waitForQuietMachine}: at
 * most 10 % of the CPUs busy for 3 s in a row, or 120 s at most) in a full run; the smoke starts
 * at once. What the wait saw is in the report.
 */
export async function beginScenario(id: string, title: string): Promise<RunningScenario> {
  const quietBeforeStart = SMOKE ? undefined : await waitForQuietMachine();
  const startedMs = performance.now();
  const loadAtStart = loadavg()[0] ?? Number.NaN;
  let distBuiltAt: string | undefined;
  try {
    distBuiltAt = statSync(join(REPO_ROOT, 'dist', 'main.js')).mtime.toISOString();
  } catch {
    distBuiltAt = undefined;
  }
  return {
    save: async (result) => {
      const report: ScenarioReport = {
        id,
        title,
        mode: SMOKE ? 'smoke' : 'full',
        ranAt: new Date().toISOString(),
        durationMs: Math.round(performance.now() - startedMs),
        loadAverage: {
          atStart: Math.round(loadAtStart * 100) / 100,
          atEnd: Math.round((loadavg()[0] ?? Number.NaN) * 100) / 100,
        },
        ...(quietBeforeStart ? { quietBeforeStart } : {}),
        build: { commit: process.env.BENCH_COMMIT, distBuiltAt },
        ...result,
      };
      await saveReport(report);
      return report;
    },
  };
}

/** Saves one scenario's report for the teardown to merge, and prints its rows at once. */
export async function saveReport(report: ScenarioReport): Promise<void> {
  await mkdir(PARTS_DIR, { recursive: true });
  await writeFile(join(PARTS_DIR, `${report.id}.json`), `${JSON.stringify(report, null, 2)}\n`);
  console.log(formatTable([report]));
}

/** Removes parts left by an earlier, interrupted run. */
export async function clearParts(): Promise<void> {
  await rm(PARTS_DIR, { recursive: true, force: true });
}

/**
 * Merges the saved parts into the results file (scenarios not run this time keep their earlier
 * entries) and returns what was written.
 */
export async function mergeParts(machine: MachineInfo): Promise<{ path: string; file: ResultsFile; ranNow: string[] }> {
  const path = resultsPath();
  let previous: ResultsFile | undefined;
  try {
    previous = JSON.parse(await readFile(path, 'utf8')) as ResultsFile;
  } catch {
    previous = undefined;
  }
  const scenarios: Record<string, ScenarioReport> = { ...(previous?.scenarios ?? {}) };
  const ranNow: string[] = [];
  let names: string[] = [];
  try {
    names = (await readdir(PARTS_DIR)).filter((n) => n.endsWith('.json')).sort();
  } catch {
    names = [];
  }
  for (const name of names) {
    const report = JSON.parse(await readFile(join(PARTS_DIR, name), 'utf8')) as ScenarioReport;
    scenarios[report.id] = report;
    ranNow.push(report.id);
  }
  const file: ResultsFile = {
    generatedAt: new Date().toISOString(),
    machine: ranNow.length > 0 || !previous ? machine : previous.machine,
    scenarios,
  };
  if (ranNow.length > 0) {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, `${JSON.stringify(file, null, 2)}\n`);
  }
  await clearParts();
  return { path, file, ranNow };
}

/** A plain-text table of every check, then the notes of each scenario. */
export function formatTable(reports: readonly ScenarioReport[]): string {
  const rows: string[][] = [['scenario', 'mode', 'metric', 'value', 'target', 'met']];
  for (const report of reports) {
    for (const check of report.checks) {
      rows.push([
        report.id,
        report.mode,
        check.metric,
        check.value === null ? 'n/a' : `${formatNumber(check.value)} ${check.unit}`.trim(),
        check.target,
        check.met ? 'yes' : 'NO',
      ]);
    }
  }
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  const line = (r: string[]): string => r.map((cell, col) => cell.padEnd(widths[col]!)).join(' | ');
  const out = [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.slice(1).map(line)];
  for (const report of reports) {
    const quiet = report.quietBeforeStart;
    const machine = `load average ${report.loadAverage.atStart} at the start, ${report.loadAverage.atEnd} at the end${
      quiet
        ? `; began after ${(quiet.waitedMs / 1000).toFixed(0)} s of waiting for a quiet machine (${quiet.quiet ? 'quiet' : 'still busy'}: ${quiet.busyPercent} % of the CPUs in the last second)`
        : ''
    }`;
    out.push('', `${report.id} notes:`, `  - ${machine}.`);
    for (const note of report.notes) out.push(`  - ${note}`);
  }
  return out.join('\n');
}

/** Three significant decimals at most, no exponent. */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toFixed(digits);
}

/** A check of `value ≤ limit`. */
export function atMost(metric: string, value: number | null, limit: number, unit: string): TargetCheck {
  return { metric, value, unit, target: `≤ ${limit} ${unit}`.trim(), met: value !== null && value <= limit };
}

/** A check of `value < limit`. */
export function below(metric: string, value: number | null, limit: number, unit: string): TargetCheck {
  return { metric, value, unit, target: `< ${limit} ${unit}`.trim(), met: value !== null && value < limit };
}

/** A check of `value ≥ limit`. */
export function atLeast(metric: string, value: number | null, limit: number, unit: string): TargetCheck {
  return { metric, value, unit, target: `≥ ${limit} ${unit}`.trim(), met: value !== null && value >= limit };
}

/** A check that `value` is exactly `expected` (counts that must be zero). */
export function exactly(metric: string, value: number | null, expected: number, unit = ''): TargetCheck {
  return { metric, value, unit, target: `= ${expected}`, met: value === expected };
}

/**
 * What a smoke run lacks: each id of `expected` must be in `ranNow` with at least one check and one
 * number, and every check must carry its figure (a finite value; a yes/no check such as a query
 * plan has unit '' and value null). Never looks at whether a target was met.
 *
 * @returns one sentence per problem; empty when every figure is present.
 */
export function missingFigures(
  expected: readonly string[],
  ranNow: readonly string[],
  scenarios: Readonly<Record<string, ScenarioReport>>,
): string[] {
  const problems: string[] = [];
  for (const id of expected) {
    const report = scenarios[id];
    if (!ranNow.includes(id) || !report) {
      problems.push(`scenario ${id} did not save a report`);
      continue;
    }
    if (report.checks.length === 0 || Object.keys(report.numbers).length === 0)
      problems.push(`scenario ${id} reported no figures`);
    for (const check of report.checks) {
      const yesNo = check.unit === '' && check.value === null;
      if (!yesNo && (check.value === null || !Number.isFinite(check.value)))
        problems.push(`scenario ${id}: "${check.metric}" has no value`);
    }
  }
  return problems;
}
