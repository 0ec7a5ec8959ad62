/**
 * Issue #12's embedded-database candidates side by side (README "Embedded database"): the baton
 * service with `DATABASE_URL` unset on embedded PostgreSQL (the default for a normal user) and on
 * PGlite (the root fallback), each on RUNS fresh homes (smoke: one home, embedded PostgreSQL only,
 * to keep the CI smoke short: PGlite's first start alone takes seconds). Runs test/bench/embedded-db.mjs
 * once per candidate and keeps its summary: first start and restart to `baton ready` (ms), idle
 * PSS summed over baton and its database processes (MB), and whether `baton runs` / `baton doctor`
 * worked beside the running service. Goals (issue #12): idle ≤ 200 MB, first start ≤ 3 s,
 * restart ≤ 1.5 s, commands working while the service runs.
 */
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { atMost, beginScenario, exactly, REPO_ROOT, size, SMOKE, type TargetCheck } from './support/results.js';

const SCRIPT = fileURLToPath(new URL('./embedded-db.mjs', import.meta.url));

/** The summary line embedded-db.mjs prints last. */
interface CandidateSummary {
  engine: string;
  runs: number;
  loadBefore: string[];
  loadAfter: string[];
  firstStartMs: string;
  restartMs: string;
  pssIdleFirstMb: string;
  pssIdleRestartMb: string;
  pssPeakMb: number;
  procs: string;
  postmastersLeft: number;
  medians: { firstStartMs: number; restartMs: number; pssIdleMb: number };
  besideFailures: number;
}

async function measure(engine: 'embedded-pg' | 'pglite', runs: number, idleMs: number): Promise<CandidateSummary> {
  const { stdout } = await execa(process.execPath, [SCRIPT, engine, String(runs)], {
    cwd: REPO_ROOT,
    env: { IDLE_MS: String(idleMs), DATABASE_URL: '' },
    timeout: 15 * 60_000,
  });
  const last = stdout.trim().split('\n').at(-1)!;
  return JSON.parse(last) as CandidateSummary;
}

describe('embedded database', () => {
  it('measures embedded PostgreSQL and PGlite side by side', async () => {
    const scenario = await beginScenario('embedded_db', 'embedded database candidates (DATABASE_URL unset)');
    const runs = size('EMBEDDED_RUNS', 3, 1);
    const idleMs = size('EMBEDDED_IDLE_MS', 10_000, 500);
    const pg = await measure('embedded-pg', runs, idleMs);
    const lite = SMOKE ? undefined : await measure('pglite', runs, idleMs);
    const numbers = { runs, idleMs, embeddedPostgres: pg, ...(lite ? { pglite: lite } : {}) };
    const pgliteChecks: TargetCheck[] = lite
      ? [
          {
            metric: 'PGlite idle PSS (median)',
            value: lite.medians.pssIdleMb,
            unit: 'MB',
            target: 'reported',
            met: true,
          },
          {
            metric: 'PGlite first start (median)',
            value: lite.medians.firstStartMs,
            unit: 'ms',
            target: 'reported',
            met: true,
          },
          {
            metric: 'PGlite restart (median)',
            value: lite.medians.restartMs,
            unit: 'ms',
            target: 'reported',
            met: true,
          },
          exactly('PGlite: runs/doctor beside the service failed', lite.besideFailures, 0),
        ]
      : [];
    await scenario.save({
      numbers,
      checks: [
        atMost('embedded PostgreSQL idle PSS, baton + database (median)', pg.medians.pssIdleMb, 200, 'MB'),
        atMost('embedded PostgreSQL first start (median)', pg.medians.firstStartMs, 3000, 'ms'),
        atMost('embedded PostgreSQL restart (median)', pg.medians.restartMs, 1500, 'ms'),
        exactly('embedded PostgreSQL: runs/doctor beside the service failed', pg.besideFailures, 0),
        exactly('embedded PostgreSQL: servers left after stop', pg.postmastersLeft, 0),
        ...pgliteChecks,
      ],
      notes: [
        `Each candidate on ${runs} fresh home(s): spawn → "baton ready" on the fresh home (first start) and again on the same home (restart); memory as PSS summed over baton and every PostgreSQL process after ${idleMs} ms idle (test/bench/embedded-db.mjs says how). As root the service runs as a normal user through runuser, since PostgreSQL refuses root.`,
        `embedded PostgreSQL: first start ${pg.firstStartMs} ms, restart ${pg.restartMs} ms, idle PSS ${pg.pssIdleFirstMb} / ${pg.pssIdleRestartMb} MB, peak ${pg.pssPeakMb} MB, ${pg.procs} processes; load ${pg.loadBefore.join('/')} → ${pg.loadAfter.join('/')}.`,
        lite
          ? `PGlite: first start ${lite.firstStartMs} ms, restart ${lite.restartMs} ms, idle PSS ${lite.pssIdleFirstMb} / ${lite.pssIdleRestartMb} MB, peak ${lite.pssPeakMb} MB; load ${lite.loadBefore.join('/')} → ${lite.loadAfter.join('/')}.`
          : 'PGlite is measured in full runs only.',
      ],
    });
    expect(pg.medians.firstStartMs).toBeGreaterThan(0);
    if (lite) expect(lite.medians.firstStartMs).toBeGreaterThan(0);
  });
});
