/**
 * The retry schedule of a failed delivery, and the quick retries on a real database: a burst of
 * transient failures is retried by the sending process within seconds (no retry-worker tick
 * needed), after which the 30 s doubling schedule takes over, capped at 30 min.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { QUICK_RETRY_DELAYS_MS, retryDelayMs, type OutboxPolicy } from '../../src/delivery/retry-schedule.js';
import { startDeliveryWorker } from '../../src/delivery/worker.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { ManualClock } from '../support/clock.js';
import { testEngine, useTestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait.js';

const database = useTestDatabase();
let store: RunStore;
beforeAll(() => {
  store = new RunStore(database.db);
});

const service: OutboxPolicy = {
  backoffBaseMs: 30_000,
  backoffCapMs: 1_800_000,
  maxAttempts: 20,
  maxAgeMs: 24 * 3_600_000,
  quickRetryDelaysMs: QUICK_RETRY_DELAYS_MS,
};
const target = { platform: 'telegram', chatId: '42', replyToMessageId: '7' };

describe('the retry schedule', () => {
  it('retries quickly four times, then from 30 s doubling up to 30 min', () => {
    expect(Array.from({ length: 12 }, (_, i) => retryDelayMs(i + 1, service) / 1000)).toEqual([
      1, 2, 4, 8, 30, 60, 120, 240, 480, 960, 1800, 1800,
    ]);
    // Five failures in a row are over 15 s after the first; the sixth attempt comes 30 s later.
    const offsets = [1, 2, 3, 4, 5].map((n) =>
      Array.from({ length: n }, (_, i) => retryDelayMs(i + 1, service)).reduce((a, b) => a + b, 0),
    );
    expect(offsets.map((ms) => ms / 1000)).toEqual([1, 3, 7, 15, 45]);
  });

  it('is the doubling schedule from the first failure without quick retries', () => {
    const { quickRetryDelaysMs: _quick, ...plain } = service;
    expect([1, 2, 3].map((n) => retryDelayMs(n, plain) / 1000)).toEqual([30, 60, 120]);
  });
});

describe(`quick retries (${testEngine})`, () => {
  /** An outbox whose quick retries are short (real timers), on a clock that stands still. */
  function setup(quickRetryDelaysMs: readonly number[]) {
    const clock = new ManualClock(Date.parse('2026-12-04T10:00:00Z'));
    const channel = new RecordingChannel('telegram', 4096);
    const outbox = new Outbox({
      store,
      clock,
      logger: silentLogger(),
      adapters: new Map([['telegram', channel]]),
      policy: { ...service, quickRetryDelaysMs },
    });
    const worker = startDeliveryWorker({ store, outbox, clock, logger: silentLogger(), tickMs: 3_600_000 });
    return { clock, channel, outbox, worker };
  }

  it('delivers after a burst of four failed sends in a row without waiting for the retry worker', async () => {
    const { channel, outbox, worker } = setup([20, 40, 80, 160]);
    try {
      await worker.tick(); // the worker's first pass is over: from here only the quick retries send
      for (let i = 0; i < 4; i++) channel.failures.push({ kind: 'network' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'after a burst' });
      expect(channel.sent).toEqual([]);
      // Delivered once the send is recorded (the record follows the platform's answer).
      await waitFor(async () => (await store.outbox.getDelivery(row.id))?.status === 'delivered', {
        timeoutMs: 20_000,
      });
      expect(channel.sent.map((m) => m.text)).toEqual(['after a burst']);
      const stored = await store.outbox.getDelivery(row.id);
      expect(stored?.attempts).toBe(4);
    } finally {
      await worker.stop();
    }
  });

  it('leaves a platform that stays down to the 30 s schedule once the quick retries are spent', async () => {
    const { clock, channel, outbox, worker } = setup([20, 40]);
    try {
      await worker.tick();
      for (let i = 0; i < 4; i++) channel.failures.push({ kind: 'network' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'platform down' });
      // The inline attempt and both quick retries fail: three attempts, the next one due in 30 s.
      await waitFor(async () => (await store.outbox.getDelivery(row.id))?.attempts === 3, { timeoutMs: 20_000 });
      const pending = await store.outbox.getDelivery(row.id);
      expect(pending?.status).toBe('pending');
      expect(pending!.nextAttemptAt.getTime() - clock.nowMs()).toBe(30_000);
      expect(channel.sent).toEqual([]);
      clock.advance(30_000);
      await worker.tick(); // fails (the fourth failure): next in 60 s
      expect((await store.outbox.getDelivery(row.id))!.nextAttemptAt.getTime() - clock.nowMs()).toBe(60_000);
      clock.advance(60_000);
      await worker.tick();
      expect(channel.sent.map((m) => m.text)).toEqual(['platform down']);
    } finally {
      await worker.stop();
    }
  });
});
