/**
 * Attack on the claim-ahead delivery worker (src/delivery/worker.ts), with a fake store and outbox
 * (no database needed). When one lane's `attemptClaimed` throws (its database write failed), the
 * pass rejected at once through `Promise.all` while the other lanes kept sending and, with claim
 * ahead, kept claiming further batches outside any pass: `stop()` returned with sends still in
 * flight (the service then closes the database under them) and rows went on being claimed after it.
 * Also: with `batchSize` below `concurrency`, only `batchSize` lanes ever ran.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import type { Outbox } from '../../src/delivery/outbox.js';
import { startDeliveryWorker } from '../../src/delivery/worker.js';
import type { RunStore } from '../../src/store/runs-repo.js';
import type { DeliveryRow } from '../../src/store/schema.js';
import { waitFor } from '../support/wait.js';

const clock = { now: () => new Date(0), nowMs: () => 0 };

/** A store that hands out rows 1…`total` in claims (5 ms each); claim number `failClaim` throws. */
function fakeStore(total: number, failClaim?: number) {
  let nextId = 1;
  let claims = 0;
  const outbox = {
    claimDueDeliveries: async (_now: Date, limit: number) => {
      claims += 1;
      await sleep(5);
      if (claims === failClaim) throw new Error('connection reset');
      const rows: DeliveryRow[] = [];
      while (rows.length < limit && nextId <= total) rows.push({ id: nextId++, runId: null } as unknown as DeliveryRow);
      return rows;
    },
  };
  return { store: { outbox } as unknown as RunStore, claims: () => claims, claimed: () => nextId - 1 };
}

describe('delivery worker lanes', () => {
  it('stop() waits for every lane still sending after another lane failed, and nothing is claimed after it', async () => {
    const { store, claimed } = fakeStore(40);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inFlight = 0;
    const started: number[] = [];
    const outbox = {
      attemptClaimed: async (row: DeliveryRow) => {
        started.push(row.id);
        inFlight += 1;
        try {
          if (row.id === 1) throw new Error('connection reset while recording the send');
          if (row.id === 2) await held;
          else await sleep(1);
          return true;
        } finally {
          inFlight -= 1;
        }
      },
    } as unknown as Outbox;
    const worker = startDeliveryWorker({
      store,
      outbox,
      clock: clock as never,
      logger: silentLogger(),
      tickMs: 3_600_000,
      batchSize: 4,
      concurrency: 2,
    });
    await sleep(100);
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    await sleep(100);
    const stoppedWhileSending = stopped && inFlight > 0;
    release();
    await stopping;
    const claimedAtStop = claimed();
    const startedAtStop = started.length;
    await sleep(100);
    expect(stoppedWhileSending).toBe(false);
    expect(claimed()).toBe(claimedAtStop);
    expect(started.length).toBe(startedAtStop);
    // Every claimed row was attempted before stop() returned (none left waiting out its lease).
    expect(started.length).toBe(claimedAtStop);
  });

  it('keeps `concurrency` lanes busy when batchSize is smaller than concurrency', async () => {
    const { store } = fakeStore(16);
    let inFlight = 0;
    let most = 0;
    let done = 0;
    const outbox = {
      attemptClaimed: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await sleep(40);
        inFlight -= 1;
        done += 1;
        return true;
      },
    } as unknown as Outbox;
    const worker = startDeliveryWorker({
      store,
      outbox,
      clock: clock as never,
      logger: silentLogger(),
      tickMs: 3_600_000,
      batchSize: 2,
      concurrency: 4,
    });
    await waitFor(() => done === 16, { what: 'all 16 jobs done', timeoutMs: 20_000, intervalMs: 5 });
    await worker.stop();
    expect(most).toBe(4);
  });

  it('a claim failing mid-pass: rows claimed before it are attempted, the error is logged once, the next pass recovers', async () => {
    const { store } = fakeStore(10, 2);
    const attempted: number[] = [];
    const outbox = {
      attemptClaimed: async (row: DeliveryRow) => (attempted.push(row.id), await sleep(2), true),
    } as unknown as Outbox;
    const errors: string[] = [];
    const logger = { ...silentLogger(), error: (_o: unknown, msg: string) => errors.push(msg) } as never;
    // The next pass comes a tick (1 s) after the failed one, long after the failed pass settled.
    const worker = startDeliveryWorker({
      store,
      outbox,
      clock: clock as never,
      logger,
      tickMs: 1_000,
      batchSize: 4,
      concurrency: 2,
    });
    await waitFor(() => errors.length > 0, { what: 'the failure to be reported', timeoutMs: 20_000, intervalMs: 5 });
    expect(attempted).toEqual([1, 2, 3, 4]);
    expect(errors).toEqual(['delivery worker tick failed']);
    await waitFor(() => attempted.length === 10, { what: '10 attempts', timeoutMs: 20_000, intervalMs: 5 });
    await worker.stop();
    expect(attempted.sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(errors).toHaveLength(1);
  });
});
