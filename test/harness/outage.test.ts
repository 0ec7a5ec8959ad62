/**
 * The supervisor while PostgreSQL is unreachable (issue #18 item 8): a run stopped during an
 * outage is not claimed as cancelled until its end is in the database; its end is kept in
 * `terminal.json` and written, with one outcome, once the database answers again.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
let h: TestHarness;
let proxy: TcpProxy;

beforeAll(async () => {
  if (!onPostgres) return;
  const server = new URL(process.env.DATABASE_URL!);
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  h = await createHarness({ rewriteDatabaseUrl: (url) => proxy.rewrite(url) });
});
afterAll(async () => {
  proxy?.accept();
  await h?.dispose();
  await proxy?.close();
});

describe.skipIf(!onPostgres)('supervisor during a database outage', { timeout: 120_000 }, () => {
  it('does not claim a cancel the database has not taken, then records it and reports it once', async () => {
    const cwd = join(h.root, 'outage-repo');
    await mkdir(cwd, { recursive: true });
    const launched = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} hang`));
    if (launched.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const runId: RunId = launched.runId;
    await waitFor(async () => (await findRunProcesses(runId)).length >= 2, {
      what: 'the run processes',
      timeoutMs: 60_000,
      intervalMs: 50,
    });

    proxy.refuse();
    proxy.cut('reset');
    const result = await h.supervisor.cancel(runId, 'owner_cancel');
    expect(result).toEqual({ kind: 'unrecorded' });
    expect(await findRunProcesses(runId)).toEqual([]);
    const recordPath = join(h.runsDir, runId, 'terminal.json');
    expect(existsSync(recordPath)).toBe(true);
    const record = JSON.parse(await readFile(recordPath, 'utf8')) as { terminal: { status: string; reason: string } };
    expect(record.terminal).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
    expect(h.supervisor.supervises(runId)).toBe(true); // still retrying the write

    proxy.accept();
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
    const outcomes = (await h.store.outbox.deliveriesOfRun(runId)).filter((d) => d.kind === 'outcome');
    expect(outcomes).toHaveLength(1);
    await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled`));
  });

  it('/cancel says the cancel is not recorded while the database cannot take the run end', async () => {
    const cwd = join(h.root, 'locked-repo');
    await mkdir(cwd, { recursive: true });
    const launched = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} hang`));
    if (launched.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(launched)}`);
    const runId = launched.runId;
    await waitFor(async () => (await findRunProcesses(runId)).length >= 2, {
      what: 'the run processes',
      timeoutMs: 60_000,
      intervalMs: 50,
    });

    // Another session holds the run's row: the end cannot be written, while reads still work.
    const other = postgres(h.database.url!, { max: 2, onnotice: () => {} });
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked = (): void => {};
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const transaction = other.begin(async (tx) => {
      await tx`select id from runs where id = ${runId} for update`;
      locked();
      await held;
    });
    try {
      await isLocked;
      await h.dispatcher.handle(inbound('1', `/cancel ${runId}`));
      const reply = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] its processes are stopped`));
      expect(reply.text).toContain('the cancel is not recorded yet');
      expect(h.channel.sent.some((m) => m.text === `[run ${runId}] cancelled.`)).toBe(false);
      expect((await other<{ status: string }[]>`select status from runs where id = ${runId}`)[0]?.status).toBe(
        'running',
      );
      expect(await findRunProcesses(runId)).toEqual([]);
    } finally {
      release();
      await transaction;
    }
    await h.supervisor.idle();
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
    expect((await h.store.outbox.deliveriesOfRun(runId)).filter((d) => d.kind === 'outcome')).toHaveLength(1);
    await other.end();
  });
});
