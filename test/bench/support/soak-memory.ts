/**
 * The soak's memory figures: samples of the service process taken from outside (/proc) and, when
 * test/bench/fakes/memory-probe.cjs is preloaded, from inside (`process.memoryUsage()`,
 * `v8.getHeapSpaceStatistics()`), and their least-squares slopes over a window of runs.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { round, slope } from './stats.js';

/** What memory-probe.cjs writes: `process.memoryUsage()` plus V8's heap spaces, in bytes. */
export interface ProbeReading {
  /** Wall-clock ms (Date.now()) of the reading. */
  atMs: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** V8 heap space name (`old_space`, `code_space`, …) → committed size and live bytes. */
  spaces: Record<string, { size: number; used: number }>;
  /** JS heap in use just after the latest full (mark-compact) collection, the `count`-th of the process; absent before the first. */
  afterMajorGc?: { atMs: number; heapUsed: number; count: number } | undefined;
}

/** A sample of the service process. */
export interface SoakSample {
  /** Seconds since the soak started. */
  atS: number;
  /** Service lifetime (restart count). */
  segment: number;
  pid: number;
  /** Runs whose outcome had reached the chat when the sample was taken (the x of every slope). */
  terminals: number;
  rssKb: number;
  fds: number;
  /** The probe's latest reading, when the probe is loaded and has written one. */
  probe?: ProbeReading | undefined;
}

/**
 * The probe's latest reading for `pid` in `dir`, or undefined while it has written none.
 *
 * @throws Error when the file exists but cannot be read or parsed (the probe renames whole files into place).
 */
export async function readProbe(dir: string, pid: number): Promise<ProbeReading | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, `memory-${pid}.json`), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as ProbeReading;
}

/** One series over a window: first and last sample and the least-squares slope. */
export interface SeriesFigures {
  /** MB (fds: count) at the window's first and last sample. */
  start: number;
  end: number;
  /** Per 100 runs: MB for memory, descriptors for fds. */
  slopePer100Runs: number;
}

/** Memory and descriptors of one window of runs in one process life. */
export interface WindowFigures {
  fromRuns: number;
  toRuns: number;
  samples: number;
  rssMb: SeriesFigures;
  fds: SeriesFigures;
  /**
   * From the probe (absent without it): the JS heap in use after each full collection in the window
   * (what a leak raises; `heapUsedMb` also holds garbage), the JS heap (used and committed), external memory
   * (`external`, which includes `arrayBuffers`), array buffers, RSS outside V8's heap
   * (`rss − heapTotal`: the allocator, code and data of node itself, threads' stacks), and V8's
   * code space (committed).
   */
  probe?: {
    samples: number;
    /** Full collections seen in the window, and the heap in use after each. */
    fullGcs: number;
    heapAfterFullGcMb: SeriesFigures;
    heapUsedMb: SeriesFigures;
    heapTotalMb: SeriesFigures;
    externalMb: SeriesFigures;
    arrayBuffersMb: SeriesFigures;
    rssOutsideHeapMb: SeriesFigures;
    codeSpaceMb: SeriesFigures;
  };
}

const MB = 1_048_576;

function series(points: readonly { x: number; y: number }[], digits = 2): SeriesFigures {
  return {
    start: round(points[0]?.y ?? Number.NaN, digits),
    end: round(points.at(-1)?.y ?? Number.NaN, digits),
    slopePer100Runs: round(slope(points) * 100, 3),
  };
}

/**
 * Figures of the samples of `segment` taken once `fromRuns` runs had finished (up to the last
 * sample of that life). Slopes are NaN with fewer than two distinct run counts.
 */
export function windowFigures(samples: readonly SoakSample[], segment: number, fromRuns: number): WindowFigures {
  const list = samples.filter((s) => s.segment === segment && s.terminals >= fromRuns);
  const probed = list.filter((s): s is SoakSample & { probe: ProbeReading } => s.probe !== undefined);
  const of = (pick: (p: ProbeReading) => number): SeriesFigures =>
    series(probed.map((s) => ({ x: s.terminals, y: pick(s.probe) / MB })));
  // Each full collection once, at the run count of the first sample that saw it.
  const afterGc = new Map<number, { x: number; y: number }>();
  for (const s of probed) {
    const gc = s.probe.afterMajorGc;
    if (gc && !afterGc.has(gc.count) && gc.atMs >= (probed[0]?.probe.atMs ?? 0))
      afterGc.set(gc.count, { x: s.terminals, y: gc.heapUsed / MB });
  }
  return {
    fromRuns,
    toRuns: list.at(-1)?.terminals ?? fromRuns,
    samples: list.length,
    rssMb: series(list.map((s) => ({ x: s.terminals, y: s.rssKb / 1024 }))),
    fds: series(
      list.map((s) => ({ x: s.terminals, y: s.fds })),
      0,
    ),
    ...(probed.length > 0
      ? {
          probe: {
            samples: probed.length,
            fullGcs: afterGc.size,
            heapAfterFullGcMb: series([...afterGc.values()]),
            heapUsedMb: of((p) => p.heapUsed),
            heapTotalMb: of((p) => p.heapTotal),
            externalMb: of((p) => p.external),
            arrayBuffersMb: of((p) => p.arrayBuffers),
            rssOutsideHeapMb: of((p) => p.rss - p.heapTotal),
            codeSpaceMb: of((p) => p.spaces['code_space']?.size ?? 0),
          },
        }
      : {}),
  };
}

/** RSS and descriptors of one process life, start to end. */
export interface LifeFigures {
  segment: number;
  samples: number;
  runs: number;
  rssStartMb: number;
  rssEndMb: number;
  fdsStart: number;
  fdsEnd: number;
  fdsMax: number;
}

/** Start and end of every process life that has samples. */
export function lifeFigures(samples: readonly SoakSample[]): LifeFigures[] {
  return [...new Set(samples.map((s) => s.segment))].map((segment) => {
    const list = samples.filter((s) => s.segment === segment);
    const first = list[0]!;
    const last = list.at(-1)!;
    return {
      segment,
      samples: list.length,
      runs: last.terminals - first.terminals,
      rssStartMb: round(first.rssKb / 1024, 1),
      rssEndMb: round(last.rssKb / 1024, 1),
      fdsStart: first.fds,
      fdsEnd: last.fds,
      fdsMax: Math.max(...list.map((s) => s.fds)),
    };
  });
}

/** Memory of one stretch of `runsPerBucket` runs of one life: RSS and the JS heap, in MB. */
export interface MemoryBucket {
  /** Runs finished at the stretch's start. */
  fromRuns: number;
  samples: number;
  rssMinMb: number;
  rssMeanMb: number;
  rssMaxMb: number;
  /** Mean committed JS heap (probe), and the heap in use after the stretch's last full collection; NaN without. */
  heapTotalMeanMb: number;
  heapAfterFullGcMb: number;
}

/** The samples of `segment` in stretches of `runsPerBucket` runs, so the shape behind a slope can be seen. */
export function memoryBuckets(samples: readonly SoakSample[], segment: number, runsPerBucket: number): MemoryBucket[] {
  const buckets = new Map<number, SoakSample[]>();
  for (const s of samples) {
    if (s.segment !== segment) continue;
    const from = Math.floor(s.terminals / runsPerBucket) * runsPerBucket;
    buckets.set(from, [...(buckets.get(from) ?? []), s]);
  }
  return [...buckets.entries()].map(([fromRuns, list]) => {
    const rss = list.map((s) => s.rssKb / 1024);
    const probed = list.flatMap((s) => (s.probe ? [s.probe] : []));
    const lastGc = probed.at(-1)?.afterMajorGc;
    return {
      fromRuns,
      samples: list.length,
      rssMinMb: round(Math.min(...rss), 1),
      rssMeanMb: round(rss.reduce((a, b) => a + b, 0) / rss.length, 1),
      rssMaxMb: round(Math.max(...rss), 1),
      heapTotalMeanMb:
        probed.length > 0 ? round(probed.reduce((a, p) => a + p.heapTotal, 0) / probed.length / MB, 1) : Number.NaN,
      heapAfterFullGcMb: lastGc ? round(lastGc.heapUsed / MB, 1) : Number.NaN,
    };
  });
}
