/**
 * Stream bounds and watchdog (PRODUCT.md §8) with a real child process: an over-long line, a
 * flood of valid events, garbage, and silence each end in the right state with memory bounded
 * (asserted through the spool size and the output limit, not through time).
 */
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { createHarness, inbound, type HarnessOptions, type TestHarness } from '../support/harness.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const MiB = 1024 * 1024;
let h: TestHarness | undefined;

// A fresh database per test, opened in a hook: under load that is the slow part, not what is tested.
const database = useTestDatabase({ per: 'test' });

async function run(
  prompt: string,
  options: HarnessOptions = {},
  launchOptions = '',
): Promise<{ h: TestHarness; runId: RunId }> {
  h = await createHarness({ ...options, database });
  const cwd = join(h.root, 'repo');
  await mkdir(cwd);
  const result = await h.dispatcher.handle(
    inbound('1', `/codex in:${cwd} ${launchOptions} ${prompt}`.replace(/\s+/g, ' ')),
  );
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return { h, runId: result.runId };
}

afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

describe(`stream bounds (${testEngine})`, () => {
  it('treats a 5 MB line past the spill cap as one framing error, keeping its first 4 MiB on disk, and completes', async () => {
    const { h, runId } = await run('bigline 5', { limits: { maxRunArtifactBytes: 4 * MiB } });
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({
      status: 'completed',
      finalMessage: 'after the big line',
      artifactTruncated: false,
    });
    expect((await stat(join(h.runsDir, runId, 'events.jsonl'))).size).toBeLessThan(10_000);
    expect((await stat(join(h.runsDir, runId, 'oversized-line-1.jsonl'))).size).toBe(4 * MiB);
  });

  it('kills a run past max_framing_errors (30 non-JSON lines) as failed/protocol', async () => {
    const { h, runId } = await run('garbage 30', { limits: { maxFramingErrors: 20 } });
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'failed', reason: 'protocol' });
  });

  it('stops spooling at the cap, flags the run, and kills it at 4× the cap (300 MB asked)', async () => {
    const { h, runId } = await run('flood 300', { limits: { maxRunArtifactBytes: 2 * MiB } });
    await h.supervisor.idle();
    const stored = await h.store.runs.getRun(runId);
    expect(stored).toMatchObject({ status: 'failed', reason: 'output_limit', artifactTruncated: true });
    const spool = (await stat(join(h.runsDir, runId, 'events.jsonl'))).size;
    expect(spool).toBeLessThanOrEqual(2 * MiB);
    expect(spool).toBeGreaterThan(1.9 * MiB);
    await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed[\\s\\S]*Reason: output_limit`));
  });

  it('keeps a run that stays under 4× the cap, truncating only its spool', async () => {
    const { h, runId } = await run('flood 3', { limits: { maxRunArtifactBytes: 1 * MiB } });
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({
      status: 'completed',
      finalMessage: 'flood done',
      artifactTruncated: true,
    });
    expect((await stat(join(h.runsDir, runId, 'events.jsonl'))).size).toBeLessThanOrEqual(1 * MiB);
  });
});

describe(`watchdog (${testEngine})`, () => {
  it('posts a first-event advisory and keeps the run going until its wall clock', async () => {
    const { h, runId } = await run('silent', { limits: { firstEventMs: 100 } });
    const notice = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] No event from codex after 100ms`));
    expect(notice.text).toContain(`/cancel ${runId}`);
    expect((await h.store.runs.getRun(runId))?.status).toBe('running');
    await h.supervisor.cancel(runId, 'owner_cancel');
    expect((await h.store.runs.getRun(runId))?.status).toBe('cancelled');
  });

  it('posts an inactivity advisory after silence; the run continues', async () => {
    const { h, runId } = await run('hang', { limits: { inactivityMs: 150 } });
    await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] No output from codex for 150ms`));
    expect((await h.store.runs.getRun(runId))?.status).toBe('running');
    await h.supervisor.cancel(runId, 'owner_cancel');
  });

  it('posts progress milestones for a progress run, at most one notice per minute', async () => {
    const { h, runId } = await run('milestones', {}, 'progress');
    await h.supervisor.idle();
    // The first batch posts at once (with whatever arrived in the same tick); a later milestone
    // falls in the same minute and is dropped when the run ends, so no progress notice ever
    // follows the outcome.
    const notices = h.channel.sent.filter((m) => m.text.startsWith(`[run ${runId}] progress: `));
    expect(notices).toHaveLength(1);
    expect(notices[0]!.text).toMatch(
      new RegExp(`^\\[run ${runId}\\] progress: running npm test(; changed 1 file \\(src/a\\.ts\\))?$`),
    );
    expect(h.channel.sent.at(-1)?.text).toMatch(new RegExp(`^\\[run ${runId}\\] completed`));
  });

  it('posts no progress for a run that did not ask', async () => {
    const { h, runId } = await run('milestones');
    await h.supervisor.idle();
    await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    expect(h.channel.sent.filter((m) => m.text.includes('progress:'))).toEqual([]);
  });
});
