/**
 * Traces (one JSON line per lifecycle event, by UTC day) and the retention sweep (expired run
 * directories and trace days go; active and recent ones stay).
 */
import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { sweepArtifacts } from '../../src/harness/retention.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

let h: TestHarness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.dispose());

const DAY_MS = 24 * 3_600_000;

describe(`traces and retention (${testEngine})`, () => {
  it('traces run_start and run_complete / run_error without the prompt', async () => {
    const ok = await h.dispatcher.handle(inbound('1', `/codex in:${h.root} success secret-prompt-words`));
    await h.supervisor.idle();
    const failed = await h.dispatcher.handle(inbound('1', `/codex in:${h.root} fail`));
    await h.supervisor.idle();
    if (ok.kind !== 'launched' || failed.kind !== 'launched') throw new Error('not launched');
    const [day] = await readdir(h.tracesDir);
    expect(day).toBe(new Date().toISOString().slice(0, 10));
    const file = join(h.tracesDir, day!, 'harness.jsonl');
    await waitFor(
      async () =>
        (await readFile(file, 'utf8').catch(() => '')).includes(failed.runId) &&
        (await readFile(file, 'utf8')).includes('run_error'),
    );
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const text = await readFile(file, 'utf8');
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; runId: string; status?: string; reason?: string });
    expect(lines.filter((l) => l.runId === ok.runId).map((l) => l.event)).toEqual(['run_start', 'run_complete']);
    expect(lines.find((l) => l.runId === failed.runId && l.event === 'run_error')).toMatchObject({
      status: 'failed',
      reason: 'vendor_error',
    });
    expect(text).not.toContain('secret-prompt-words');
  });

  it('sweeps expired run directories and trace days, keeping active, recent and unknown-name ones', async () => {
    const nowMs = Date.now();
    const clock: Clock = { nowMs: () => nowMs + 40 * DAY_MS, now: () => new Date(nowMs + 40 * DAY_MS) };
    const active = await h.dispatcher.handle(inbound('1', `/codex in:${h.root} hang`));
    if (active.kind !== 'launched') throw new Error('not launched');
    await waitFor(async () => (await h.store.runs.getRun(active.runId))?.status === 'running');
    // A stray directory without a row, old by mtime; and a non-run directory that must stay.
    const stray = join(h.runsDir, 'hr_0000000000aa');
    await mkdir(stray, { recursive: true });
    await writeFile(join(stray, 'events.jsonl'), '{}');
    const old = new Date(nowMs - 5 * DAY_MS);
    await utimes(stray, old, old);
    await mkdir(join(h.runsDir, 'not-a-run'), { recursive: true });
    await mkdir(join(h.tracesDir, '2000-01-01'), { recursive: true });

    const before = new Set(await readdir(h.runsDir));
    const result = await sweepArtifacts({
      runsDir: h.runsDir,
      tracesDir: h.tracesDir,
      retentionMs: 30 * DAY_MS,
      store: h.store,
      clock,
      logger: silentLogger(),
    });
    const after = new Set(await readdir(h.runsDir));
    expect(after.has(active.runId)).toBe(true);
    expect(after.has('not-a-run')).toBe(true);
    expect(after.has('hr_0000000000aa')).toBe(false);
    // Every finished run of the first test ended "40 days ago" from the sweep's clock.
    expect(result.runDirs).toBe(before.size - 2);
    expect(await readdir(h.tracesDir)).not.toContain('2000-01-01');
    expect(result.traceDays).toBeGreaterThanOrEqual(1);
    await h.supervisor.cancel(active.runId, 'owner_cancel');
  });
});
