/**
 * Repository size: what a run's working-tree snapshot (before the task reaches the CLI) and diff
 * (between the CLI's exit and the outcome) cost as the repository grows, at 1,000, 20,000 and
 * 100,000 committed files (smoke: 1,000). Each run is a fake codex (test/bench/fakes/codex-repo-size.mjs)
 * that changes one file and exits at once, so the figures are baton's own: the CLI's exit (stamped
 * by the CLI on the wall clock) → the outcome message reaching the fake Bot API (stamped in the
 * fake's handler, same clock), and the CLI's spawn → its task on stdin (the launch snapshot the
 * task waits for; the spans of baton's log).
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { atMost, beginScenario, size, SMOKE } from './support/results.js';
import { summary } from './support/stats.js';
import { replyTargetOf, startBenchWorld, TERMINAL_PATTERN, type BenchWorld } from './support/world.js';

const FAKE_CODEX = fileURLToPath(new URL('./fakes/codex-repo-size.mjs', import.meta.url));
/** Issue #34's target: exit → outcome at 100,000 files, p50. */
const EXIT_TO_OUTCOME_P50_TARGET_MS = 100;
/** Files per directory of the generated repositories (a source tree's order of magnitude). */
const FILES_PER_DIR = 50;

const worlds: BenchWorld[] = [];
afterAll(async () => {
  for (const world of worlds) await world.dispose();
});

/** Fills `repo` with `files` small committed files, `FILES_PER_DIR` per directory, 20 directories per parent. */
async function fillRepo(repo: string, files: number): Promise<void> {
  const dirs = Math.ceil(files / FILES_PER_DIR);
  for (let d = 0; d < dirs; d++) {
    const dir = join(repo, `p${Math.floor(d / 20)}`, `d${d}`);
    await mkdir(dir, { recursive: true });
    const writes: Promise<void>[] = [];
    for (let f = d * FILES_PER_DIR; f < Math.min(files, (d + 1) * FILES_PER_DIR); f++) {
      writes.push(writeFile(join(dir, `f${f}.txt`), `file ${f}\nline two\n`));
    }
    await Promise.all(writes);
  }
  await writeFile(join(repo, '.gitignore'), '*.log\n');
  const git = (...args: string[]) =>
    execa('git', ['-c', 'user.email=bench@example.invalid', '-c', 'user.name=bench', ...args], { cwd: repo });
  await git('add', '-A');
  await git('commit', '-qm', 'bench tree');
  // Stat data newer than the files: no entry of the user's index is racily clean.
  await new Promise((r) => setTimeout(r, 1_100));
  await git('update-index', '--refresh');
}

interface SizeResult {
  files: number;
  runs: number;
  exitToOutcomeMs: ReturnType<typeof summary>;
  spawnToTaskSentMs: ReturnType<typeof summary>;
  outcomes: string[];
}

/** `runs` runs in a repository of `files` files, one after another. */
async function measureSize(files: number, runs: number): Promise<SizeResult> {
  const binDir = await mkdtemp(join(tmpdir(), 'baton-bench-repo-size-bin-'));
  await symlink(FAKE_CODEX, join(binDir, 'codex'));
  // The fake codex speaks `codex exec --json` only.
  const world = await startBenchWorld({
    binDirs: [binDir],
    engine: 'postgres',
    start: false,
    logLevel: 'debug',
    harnessToml: ['codex_transport = "exec"'],
  });
  worlds.push(world);
  const repo = world.repos.repo!;
  await fillRepo(repo, files);
  await world.start();
  const exitToOutcome: number[] = [];
  const outcomes: string[] = [];
  const runIds: string[] = [];
  for (let i = 0; i < runs; i++) {
    const stamp = join(world.dir, `exit-${files}-${i}`);
    const messageId = 1000 + i;
    const arrived = world.telegram.waitForSent(
      (body) => replyTargetOf(body) === messageId && TERMINAL_PATTERN.test(body.text),
      120_000,
    );
    const outcomeAt = arrived.then(() => performance.timeOrigin + performance.now());
    world.pushOwnerMessage(`/codex edit ${join(repo, 'p0', 'd0', 'f0.txt')} ${stamp}`, messageId);
    const [body, atMs] = await Promise.all([arrived, outcomeAt]);
    const exitedAt = Number(await readFile(stamp, 'utf8'));
    exitToOutcome.push(atMs - exitedAt);
    outcomes.push(body.text.split('\n')[0]!);
    runIds.push(/\[run (hr_[0-9a-f]{12})\]/.exec(body.text)![1]!);
  }
  // 'task sent to the CLI' carries the launch spans: ms since the supervisor began the launch.
  const spawnToTask: number[] = [];
  for (const line of world.service.stdout().split('\n')) {
    if (!line.includes('"task sent to the CLI"')) continue;
    const record = JSON.parse(line) as { runId?: string; spansMs?: Record<string, number> };
    const spans = record.spansMs;
    if (record.runId && runIds.includes(record.runId) && spans?.task_sent !== undefined && spans.spawned !== undefined)
      spawnToTask.push(spans.task_sent - spans.spawned);
  }
  await world.stop();
  await rm(binDir, { recursive: true, force: true });
  return {
    files,
    runs,
    exitToOutcomeMs: summary(exitToOutcome),
    spawnToTaskSentMs: summary(spawnToTask),
    outcomes: [...new Set(outcomes.map((o) => o.replace(/hr_[0-9a-f]{12}/, 'hr_…')))],
  };
}

describe('repository size', () => {
  it('measures the snapshot and the diff at 1k, 20k and 100k files', async () => {
    const scenario = await beginScenario('repo_size', 'Repository size: snapshot and diff cost at 1k, 20k, 100k files');
    const sizes = (process.env.BENCH_REPO_SIZES ?? (SMOKE ? '1000' : '1000,20000,100000'))
      .split(',')
      .map((n) => Number(n.trim()));
    const runs = size('REPO_SIZE_RUNS', 20, 2);
    const results: SizeResult[] = [];
    for (const files of sizes) results.push(await measureSize(files, runs));
    const largest = results.at(-1)!;
    const notes = [
      `Each run: a fake codex that changes one file and exits at once (${runs} runs per size, one after another, PostgreSQL). exit → outcome: the CLI's own exit stamp (wall clock) to the outcome message's arrival at the fake Bot API (same clock); spawn → task sent: the launch spans of baton's log (the launch snapshot the task waits for).`,
      ...results.map(
        (r) =>
          `${r.files} files: exit → outcome p50 ${r.exitToOutcomeMs.p50} ms, p95 ${r.exitToOutcomeMs.p95} ms; spawn → task sent p50 ${r.spawnToTaskSentMs.p50} ms, p95 ${r.spawnToTaskSentMs.p95} ms; outcomes: ${r.outcomes.join(' / ')}.`,
      ),
    ];
    await scenario.save({
      numbers: { perSize: results },
      checks: [
        ...results.map((r) =>
          r === largest && r.files >= 100_000
            ? atMost(
                `exit → outcome p50 at ${r.files} files`,
                r.exitToOutcomeMs.p50,
                EXIT_TO_OUTCOME_P50_TARGET_MS,
                'ms',
              )
            : {
                metric: `exit → outcome p50 at ${r.files} files`,
                value: r.exitToOutcomeMs.p50,
                unit: 'ms',
                target: 'reported',
                met: true,
              },
        ),
        ...results.map((r) => ({
          metric: `spawn → task sent p50 at ${r.files} files`,
          value: r.spawnToTaskSentMs.p50,
          unit: 'ms',
          target: 'reported',
          met: true,
        })),
      ],
      notes,
    });
    expect(
      results.every((r) => r.exitToOutcomeMs.n === r.runs && r.outcomes.every((o) => o.includes('completed'))),
    ).toBe(true);
  });
});
