/**
 * Scenario 6, soak: short runs back to back through `baton start` with `max_active = 2` — two
 * lanes, one per repo (one active run per worktree is the rule), each sending
 * `/codex in:<repo> success N` to the fake Bot API as soon as its previous request got its outcome
 * — with the fake codex CLI (test/fakes/fake-codex.mjs, `success` scenario). Two phases:
 *
 * 1. One long process life of `BENCH_SOAK_RUNS` runs (2,000; smoke 10). Its RSS and open
 *    descriptors (/proc/<pid>, every second) over the runs from `BENCH_SOAK_SLOPE_FROM` (half of
 *    them: runs 1,000–2,000) give the memory slope, judged against ≤ 5 MB per 100 runs; the
 *    service also reports its own `process.memoryUsage()` (test/bench/fakes/memory-probe.cjs) so
 *    the slope splits into JS heap, external memory and RSS outside the heap.
 * 2. A kill cycle of `BENCH_SOAK_KILL_RUNS` more runs (500; smoke 10): the service is killed with
 *    SIGKILL at the last run of the long life and then every `BENCH_SOAK_RESTART_EVERY` launches
 *    (100; smoke 5), at a varying point of the run just launched, and started again.
 *
 * Checked at the end over both phases, against the fake's messages and the database: every
 * launched run's outcome (or `interrupted` message) reached the chat, no run is left active, no
 * request vanished.
 */
import { mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { measureStorage } from '../../src/harness/storage.js';
import { fdCount, rssKb } from './support/proc.js';
import { atMost, exactly, size, beginScenario, SMOKE } from './support/results.js';
import { SentIndex } from './support/sent-index.js';
import { lifeFigures, memoryBuckets, readProbe, windowFigures, type SoakSample } from './support/soak-memory.js';
import { median, percentile, round, slope } from './support/stats.js';
import { startBenchWorld, TELEGRAM_TOKEN, type BenchWorld } from './support/world.js';

const FAKE_CODEX = fileURLToPath(new URL('./fakes/codex-bench.mjs', import.meta.url));
const MEMORY_PROBE = fileURLToPath(new URL('./fakes/memory-probe.cjs', import.meta.url));
/** Targets of issue #15 for the long life's window: RSS in MB and open descriptors, per 100 runs. */
const RSS_SLOPE_LIMIT_MB = 5;
const FD_SLOPE_LIMIT = 1;
const LANES = ['a', 'b'] as const;
/** A request without any reply after this long is looked up in the database, in ms. */
const LOOKUP_AFTER_MS = 5_000;

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/** One `/codex` request and what became of it. */
interface Request {
  n: number;
  lane: string;
  messageId: number;
  updateId: number;
  pushedAtMs: number;
  /** Service lifetime (restart count) when it was pushed. */
  segment: number;
  runId?: string | undefined;
  startedAtMs?: number;
  terminalAtMs?: number;
  status?: string | undefined;
  /** Why the lane moved on without a terminal message. */
  movedOn?: string;
}

describe('soak', () => {
  it('keeps every outcome across runs and SIGKILL restarts', async () => {
    const scenario = await beginScenario('soak', 'Soak: one long process life, then short runs with SIGKILL restarts');
    const lifeRuns = size('SOAK_RUNS', 2_000, 6);
    const slopeFrom = size('SOAK_SLOPE_FROM', Math.floor(lifeRuns / 2), Math.floor(lifeRuns / 2));
    const killRuns = size('SOAK_KILL_RUNS', 500, 4);
    const restartEvery = size('SOAK_RESTART_EVERY', 100, 2);
    const total = lifeRuns + killRuns;
    const drainWaitMs = size('SOAK_DRAIN_S', 180, 3) * 1000;
    if (slopeFrom >= lifeRuns)
      throw new Error(`BENCH_SOAK_SLOPE_FROM=${slopeFrom} must be below BENCH_SOAK_RUNS=${lifeRuns}`);
    /** SIGKILL right after launching the long life's last run, then every `restartEvery` launches, while runs remain after it. */
    const killsAt = (n: number): boolean => n >= lifeRuns && n < total && (n - lifeRuns) % restartEvery === 0;

    const binDir = await mkdtemp(join(tmpdir(), 'baton-bench-bin-'));
    cleanups.push(() => rm(binDir, { recursive: true, force: true }));
    await mkdir(binDir, { recursive: true });
    await symlink(FAKE_CODEX, join(binDir, 'codex'));
    // BENCH_SOAK_HEAP_AT=0,500,1000: heap snapshots of the service after that many runs of the long
    // life (node's --heapsnapshot-signal), written to a temporary directory named in the results
    // and left there for test/bench/heap-diff.mjs.
    const heapAt = (process.env.BENCH_SOAK_HEAP_AT ?? '')
      .split(',')
      .filter((n) => n.trim() !== '')
      .map(Number);
    const outsideLife = heapAt.filter((n) => !Number.isInteger(n) || n < 0 || n >= lifeRuns);
    if (outsideLife.length > 0)
      throw new Error(
        `BENCH_SOAK_HEAP_AT: ${outsideLife.join(', ')} is not a run count within the long life (0–${lifeRuns - 1}; its last run is killed)`,
      );
    const heapDir = heapAt.length > 0 ? await mkdtemp(join(tmpdir(), 'baton-bench-heap-')) : undefined;
    const world: BenchWorld = await startBenchWorld({
      binDirs: [binDir],
      engine: 'postgres',
      repos: [...LANES],
      // The fake codex speaks `codex exec --json` only.
      harnessToml: ['max_active = 2', 'codex_transport = "exec"'],
      start: false,
    });
    cleanups.push(() => world.dispose());
    const probeDir = join(world.dir, 'memory-probe');
    await mkdir(probeDir);
    world.env.BENCH_MEMORY_PROBE_DIR = probeDir;
    world.env.NODE_OPTIONS = [
      `--require=${MEMORY_PROBE}`,
      ...(heapDir ? [`--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${heapDir}`] : []),
    ].join(' ');
    /**
     * `rssKb` and `probe` are taken just before the signal; a snapshot itself leaves RSS higher (V8
     * keeps what it allocated to write it), so the RSS slope of a run with a snapshot in or just
     * before the window is not the measurement.
     */
    const heapSnapshots: {
      afterRuns: number;
      pid: number;
      file: string;
      bytes: number;
      rssKb: number;
      probe: Awaited<ReturnType<typeof readProbe>>;
    }[] = [];
    const snapshot = async (afterRuns: number): Promise<void> => {
      const pid = world.service.pid;
      const before = new Set(await readdir(heapDir!));
      const rss = await rssKb(pid);
      const probe = await readProbe(probeDir, pid);
      process.kill(pid, 'SIGUSR2');
      for (let i = 0; i < 1200; i++) {
        await new Promise((r) => setTimeout(r, 250));
        const fresh = (await readdir(heapDir!)).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
        if (fresh[0]) {
          const path = join(heapDir!, fresh[0]);
          // Done when it has bytes and its size stops changing (node creates it empty first).
          let last = -1;
          for (let size = (await stat(path)).size; size === 0 || size !== last; size = (await stat(path)).size) {
            last = size;
            await new Promise((r) => setTimeout(r, 1_000));
          }
          heapSnapshots.push({ afterRuns, pid, file: path, bytes: last, rssKb: rss, probe });
          return;
        }
      }
      throw new Error(`no heap snapshot appeared in ${heapDir} after SIGUSR2`);
    };
    await world.start();
    if (heapAt.includes(0)) {
      // The probe's first reading comes a second after start.
      await new Promise((r) => setTimeout(r, 1_500));
      await snapshot(0);
    }
    const sql = postgres(world.databaseUrl!, { max: 2, onnotice: () => {} });
    cleanups.push(() => sql.end({ timeout: 5 }));
    const index = new SentIndex(world.telegram);
    const botId = TELEGRAM_TOKEN.split(':')[0]!;

    const requests: Request[] = [];
    const samples: SoakSample[] = [];
    const restartMs: number[] = [];
    let segment = 0;
    let launched = 0;
    let terminals = 0;
    let restarting: Promise<void> | undefined;
    let done = false;
    const t0 = performance.now();

    // Sampler: the current service process, every second (smoke: every 200 ms, to get a few samples).
    const sampleEveryMs = SMOKE ? 200 : 1_000;
    const sampleOnce = async (): Promise<void> => {
      const pid = world.service.pid;
      try {
        const [rss, fds, probe] = await Promise.all([rssKb(pid), fdCount(pid), readProbe(probeDir, pid)]);
        samples.push({
          atS: round((performance.now() - t0) / 1000, 1),
          segment,
          pid,
          terminals,
          rssKb: rss,
          fds,
          probe,
        });
      } catch (err) {
        // the process went away between reading its pid and its files: a restart
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    };
    const sampler = (async () => {
      while (!done) {
        await new Promise((r) => setTimeout(r, sampleEveryMs));
        if (restarting) continue;
        await sampleOnce();
      }
    })();

    /** What the database knows of a request. */
    const lookup = async (request: Request): Promise<{ runStatus?: string; runId?: string; inbound: boolean }> => {
      const runs = await sql<
        { id: string; status: string }[]
      >`select id, status::text from runs where origin->>'messageId' = ${String(request.messageId)}`;
      const inbound =
        await sql`select 1 from inbound_events where platform = 'telegram' and dedupe_key = ${`${botId}:${request.updateId}`}`;
      return { ...(runs[0] ? { runId: runs[0].id, runStatus: runs[0].status } : {}), inbound: inbound.length > 0 };
    };

    /** Waits for a request's terminal message, or for the database to say why none will come soon. */
    const settle = async (request: Request): Promise<void> => {
      let lastLookupMs = 0;
      for (;;) {
        index.scan();
        for (const message of index.repliesTo(request.messageId)) {
          if (message.kind === 'started' && request.startedAtMs === undefined) {
            request.startedAtMs = message.atMs;
            request.runId = message.runId;
          }
          if (message.kind === 'terminal' && request.terminalAtMs === undefined) {
            request.terminalAtMs = message.atMs;
            request.status = message.status;
            request.runId = message.runId;
            terminals += 1;
          }
          if (message.kind === 'other' && request.movedOn === undefined)
            request.movedOn = `refused: ${message.text.slice(0, 80)}`;
        }
        if (request.terminalAtMs !== undefined || request.movedOn !== undefined) return;
        const now = performance.now();
        if (!restarting && now - request.pushedAtMs > LOOKUP_AFTER_MS && now - lastLookupMs > 2_000) {
          lastLookupMs = now;
          const known = await lookup(request);
          if (known.runStatus && known.runStatus !== 'starting' && known.runStatus !== 'running') {
            request.runId = known.runId;
            request.movedOn = `run ${known.runStatus}, outcome not yet in the chat`;
            return;
          }
          if (!known.runId && known.inbound) {
            request.movedOn = 'inbound recorded, no run, no reply';
            return;
          }
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    const lane = async (name: string): Promise<void> => {
      for (;;) {
        if (restarting) await restarting;
        if (launched >= total) return;
        const n = ++launched;
        const messageId = 10_000 + n;
        const request: Request = { n, lane: name, messageId, updateId: 0, pushedAtMs: performance.now(), segment };
        request.updateId = world.pushOwnerMessage(`/codex in:${name} success ${n}`, messageId);
        requests.push(request);
        if (killsAt(n)) {
          // Crash at a varying point of the run just launched (0–150 ms after the request).
          const delayMs = (n * 37) % 150;
          restarting = (async () => {
            await new Promise((r) => setTimeout(r, delayMs));
            restartMs.push(await world.crashAndRestart());
            segment += 1;
          })().finally(() => {
            restarting = undefined;
          });
        }
        await settle(request);
        // A smoke's window of the long life lasts a fraction of a second on a quiet machine: a
        // sample per settled run there, so its slopes have points to be fitted to.
        if (SMOKE && segment === 0 && !restarting && n >= slopeFrom && n < lifeRuns) await sampleOnce();
        if (heapDir && heapAt.includes(n) && n > 0 && n < lifeRuns) await snapshot(n);
      }
    };
    await Promise.all(LANES.map((name) => lane(name)));
    if (restarting) await restarting;

    // Drain: outcomes still in the outbox (a crash between the state change and its send) go out
    // at the next worker tick after their 60 s lease.
    const unresolved = (): Request[] =>
      requests.filter(
        (r) =>
          r.terminalAtMs === undefined &&
          !r.movedOn?.startsWith('refused') &&
          r.movedOn !== 'inbound recorded, no run, no reply',
      );
    const drainStartedMs = performance.now();
    while (unresolved().length > 0 && performance.now() - drainStartedMs < drainWaitMs) {
      await new Promise((r) => setTimeout(r, 250));
      index.scan();
      for (const request of unresolved()) {
        const terminal = index.repliesTo(request.messageId).find((m) => m.kind === 'terminal');
        if (terminal) {
          request.terminalAtMs = terminal.atMs;
          request.status = terminal.status;
          request.runId = terminal.runId;
        }
      }
    }
    done = true;
    await sampler;
    index.scan();

    // Final accounting against the database.
    const runs = await sql<
      { id: string; status: string; reason: string | null; origin_message: string }[]
    >`select id, status::text, reason, origin->>'messageId' as origin_message from runs`;
    const deliveryRows = await sql<
      { run_id: string; kind: string; status: string }[]
    >`select run_id, kind, status::text from deliveries where run_id is not null`;
    const runOfMessage = new Map(runs.map((r) => [Number(r.origin_message), r]));
    const terminalSeen = new Map<string, number>();
    const startedSeen = new Map<string, number>();
    for (const message of index.all) {
      if (!message.runId) continue;
      if (message.kind === 'terminal') terminalSeen.set(message.runId, (terminalSeen.get(message.runId) ?? 0) + 1);
      if (message.kind === 'started') startedSeen.set(message.runId, (startedSeen.get(message.runId) ?? 0) + 1);
    }
    const stuck = runs.filter((r) => r.status === 'starting' || r.status === 'running');
    const outcomePending = runs.filter(
      (r) =>
        !terminalSeen.has(r.id) &&
        deliveryRows.some((d) => d.run_id === r.id && d.kind === 'outcome' && d.status === 'pending'),
    );
    const lostOutcomes = runs.filter(
      (r) => !stuck.includes(r) && !terminalSeen.has(r.id) && !outcomePending.includes(r),
    );
    const unanswered: Request[] = [];
    const neverProcessed: Request[] = [];
    for (const request of requests) {
      if (runOfMessage.has(request.messageId)) continue;
      if (index.repliesTo(request.messageId).length > 0) continue; // a refusal
      const inbound =
        await sql`select 1 from inbound_events where platform = 'telegram' and dedupe_key = ${`${botId}:${request.updateId}`}`;
      (inbound.length > 0 ? unanswered : neverProcessed).push(request);
    }
    const duplicateOutcomes = [...terminalSeen.values()].filter((count) => count > 1).length;
    const duplicateStarted = [...startedSeen.values()].filter((count) => count > 1).length;
    const startedMissing = runs.filter((r) => !startedSeen.has(r.id)).length;
    const statusCounts: Record<string, number> = {};
    for (const r of runs) statusCounts[r.status] = (statusCounts[r.status] ?? 0) + 1;

    // Latency of undisturbed runs (pushed and finished within one service lifetime, completed).
    const clean = requests.filter(
      (r) =>
        r.status === 'completed' &&
        r.startedAtMs !== undefined &&
        r.terminalAtMs !== undefined &&
        r.movedOn === undefined,
    );
    const latency = clean.map((r) => ({ x: r.n, y: r.terminalAtMs! - r.pushedAtMs }));
    const quarter = Math.max(1, Math.floor(latency.length / 4));
    const firstQuarterMs = round(median(latency.slice(0, quarter).map((p) => p.y)), 0);
    const lastQuarterMs = round(median(latency.slice(-quarter).map((p) => p.y)), 0);

    // The long life's window (runs slopeFrom..lifeRuns): a fresh process grows while it warms up
    // (JIT, module caches, pools), which the first half leaves out. Then each life's ends.
    const longLife = windowFigures(samples, 0, slopeFrom);
    const lives = lifeFigures(samples);
    const rssSlopeMb = longLife.rssMb.slopePer100Runs;
    /** 100 at the default 2,000 runs. */
    const bucketRuns = Math.max(1, Math.round(lifeRuns / 20));
    const fdSlope = longLife.fds.slopePer100Runs;
    const storageT0 = performance.now();
    const storage = await measureStorage(join(world.batonHome, 'harness', 'runs'), true);
    const storageScanMs = round(performance.now() - storageT0, 1);

    const numbers = {
      ...(heapSnapshots.length > 0 ? { heapSnapshots } : {}),
      runsRequested: total,
      longLifeRuns: lifeRuns,
      slopeFromRuns: slopeFrom,
      killCycleRuns: killRuns,
      restartEvery,
      restarts: restartMs.length,
      restartToReadyMs: restartMs.map((ms) => round(ms, 0)),
      wallSeconds: round((performance.now() - t0) / 1000, 1),
      runsInDatabase: runs.length,
      statusCounts,
      lostOutcomes: lostOutcomes.length,
      stuckRuns: stuck.length,
      outcomesStillInOutbox: outcomePending.length,
      unansweredRequests: unanswered.length,
      requestsNeverProcessed: neverProcessed.length,
      duplicateOutcomes,
      duplicateStartedMessages: duplicateStarted,
      startedMessagesMissing: startedMissing,
      requestToOutcomeMs: {
        n: latency.length,
        p50: round(
          percentile(
            latency.map((p) => p.y),
            50,
          ),
          0,
        ),
        p95: round(
          percentile(
            latency.map((p) => p.y),
            95,
          ),
          0,
        ),
        firstQuarterMedian: firstQuarterMs,
        lastQuarterMedian: lastQuarterMs,
        slopeMsPer1000Runs: round(slope(latency) * 1000, 1),
      },
      longLife,
      longLifeBuckets: { runsPerBucket: bucketRuns, buckets: memoryBuckets(samples, 0, bucketRuns) },
      lives,
      artifactStore: { bytes: storage.artifactBytes, scanMs: storageScanMs },
      examples: {
        notCompleted: runs
          .filter((r) => r.status !== 'completed')
          .slice(0, 10)
          .map((r) => ({ id: r.id, status: r.status, reason: r.reason })),
        duplicateOutcomes: [...terminalSeen.entries()]
          .filter(([, count]) => count > 1)
          .slice(0, 5)
          .map(([id, count]) => ({
            id,
            count,
            texts: index.all.filter((m) => m.runId === id && m.kind === 'terminal').map((m) => m.text.split('\n')[0]),
          })),
        lost: lostOutcomes.slice(0, 5).map((r) => ({ id: r.id, status: r.status })),
        unanswered: unanswered.slice(0, 5).map((r) => ({ n: r.n, updateId: r.updateId, segment: r.segment })),
        neverProcessed: neverProcessed.slice(0, 5).map((r) => ({ n: r.n, updateId: r.updateId })),
      },
    };
    const probe = longLife.probe;
    const notes = [
      `Memory over time: one process life of ${lifeRuns} runs; least squares over its ${longLife.samples} samples (every ${sampleEveryMs} ms, /proc/<pid>) from run ${slopeFrom} to ${longLife.toRuns}: RSS ${longLife.rssMb.start} → ${longLife.rssMb.end} MB, ${rssSlopeMb} MB per 100 runs (target ≤ ${RSS_SLOPE_LIMIT_MB}); open descriptors ${longLife.fds.start} → ${longLife.fds.end}, ${fdSlope} per 100 runs (flat: ≤ ${FD_SLOPE_LIMIT}).`,
      probe
        ? `Inside the service over the same window (process.memoryUsage(), test/bench/fakes/memory-probe.cjs), MB start → end and per 100 runs: JS heap in use after a full collection ${probe.heapAfterFullGcMb.start} → ${probe.heapAfterFullGcMb.end} (${probe.heapAfterFullGcMb.slopePer100Runs}, ${probe.fullGcs} collections), JS heap used ${probe.heapUsedMb.start} → ${probe.heapUsedMb.end} (${probe.heapUsedMb.slopePer100Runs}), heap committed ${probe.heapTotalMb.start} → ${probe.heapTotalMb.end} (${probe.heapTotalMb.slopePer100Runs}), of it V8 code space ${probe.codeSpaceMb.start} → ${probe.codeSpaceMb.end} (${probe.codeSpaceMb.slopePer100Runs}); external ${probe.externalMb.start} → ${probe.externalMb.end} (${probe.externalMb.slopePer100Runs}), of it array buffers ${probe.arrayBuffersMb.start} → ${probe.arrayBuffersMb.end} (${probe.arrayBuffersMb.slopePer100Runs}); RSS outside the JS heap (rss − heap committed: allocator, node's own code and data, stacks) ${probe.rssOutsideHeapMb.start} → ${probe.rssOutsideHeapMb.end} (${probe.rssOutsideHeapMb.slopePer100Runs}).`
        : 'The memory probe wrote no reading in the window (no breakdown of RSS).',
      `Kill cycle: ${killRuns} more runs, SIGKILL at the long life's last run and every ${restartEvery} launches after (${restartMs.length} restarts), at a varying point of the run just launched. RSS at the end of each life: ${lives.map((l) => l.rssEndMb).join(', ')} MB; descriptors: ${lives.map((l) => l.fdsEnd).join(', ')}. Lanes a and b (two repos) keep max_active = 2 busy; PostgreSQL (kill -9 of a PGlite service is not measured).`,
      ...(heapSnapshots.length > 0
        ? [
            `Heap snapshots after ${heapSnapshots.map((h) => h.afterRuns).join(', ')} runs of the long life in ${heapDir} (node test/bench/heap-diff.mjs ${heapSnapshots.map((h) => h.file).join(' ')}); JS heap used then ${heapSnapshots.map((h) => (h.probe ? round(h.probe.heapUsed / 1_048_576, 1) : 'n/a')).join(', ')} MB, RSS ${heapSnapshots.map((h) => round(h.rssKb / 1024, 1)).join(', ')} MB. A snapshot leaves RSS higher, so with one at or after run ${slopeFrom} the RSS slope above is not the measurement.`,
          ]
        : []),
      `Outcomes of runs a crash caught between their state change and its send stay in the outbox until their inline lease (INLINE_LEASE_MS in runs-repo.ts, 60 s when this bench was written) runs out and a worker tick picks them up; the bench waited up to ${drainWaitMs / 1000} s for them${outcomePending.length > 0 ? `, and ${outcomePending.length} were still pending when it stopped waiting (not lost: their rows are pending)` : ''}.`,
      `Request → outcome latency of undisturbed runs: median ${firstQuarterMs} ms in the first quarter, ${lastQuarterMs} ms in the last (slope ${numbers.requestToOutcomeMs.slopeMsPer1000Runs} ms per 1000 runs). The storage gate measures the artifact store with a stat per file (harness/storage.ts measureStorage), off the launch path since issue #15 (at most once a minute, in the background, while launches come); at the end the store held ${runs.length} run directories and one such walk from the bench took ${storageScanMs} ms.`,
    ];
    if (unanswered.length > 0) {
      notes.push(
        `${unanswered.length} request(s) got no reply at all, though Telegram updates go to the inbox (inbound_events, state received) before the poll offset confirms them and a restart replays unclaimed ones and releases dead processes' claims; look for their rows in inbound_events.`,
      );
    }
    if (lostOutcomes.length > 0)
      notes.push(
        `${lostOutcomes.length} run(s) ended without any outcome reaching the chat or waiting in the outbox (examples in numbers.examples.lost).`,
      );
    if (stuck.length > 0) notes.push(`${stuck.length} run(s) were still active at the end.`);

    await scenario.save({
      numbers,
      checks: [
        exactly('lost outcomes', lostOutcomes.length, 0),
        exactly('stuck runs', stuck.length, 0),
        exactly('requests without any reply', unanswered.length + neverProcessed.length, 0),
        atMost(`RSS slope, runs ${slopeFrom}–${lifeRuns} of one life`, rssSlopeMb, RSS_SLOPE_LIMIT_MB, 'MB/100 runs'),
        atMost(`fd slope, runs ${slopeFrom}–${lifeRuns} of one life`, fdSlope, FD_SLOPE_LIMIT, 'fds/100 runs'),
        {
          metric: 'request→outcome latency slope',
          value: numbers.requestToOutcomeMs.slopeMsPer1000Runs,
          unit: 'ms/1000 runs',
          target: 'reported',
          met: true,
        },
      ],
      notes,
    });
    expect(runs.length).toBeGreaterThan(0);
    expect(samples.length).toBeGreaterThan(0);
  });
});
