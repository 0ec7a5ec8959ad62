/**
 * Outbox and retry worker on a real database with a recording channel and a manual clock:
 * retries follow the backoff schedule, rate limits are honoured, caps dead-letter, split parts
 * are never resent.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { backoffMs, Outbox, type OutboxPolicy } from '../../src/delivery/outbox.js';
import { startDeliveryWorker } from '../../src/delivery/worker.js';
import { RunStore, INLINE_LEASE_MS } from '../../src/store/runs-repo.js';
import type { RunId } from '../../src/core/ids.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { ChannelSendError } from '../../src/channels/types.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { createRunRow } from '../support/rows.js';
import { ManualClock } from '../support/clock.js';

const policy: OutboxPolicy = {
  backoffBaseMs: 30_000,
  backoffCapMs: 1_800_000,
  maxAttempts: 5,
  maxAgeMs: 24 * 3_600_000,
};
const target = { platform: 'telegram', chatId: '42', replyToMessageId: '7' };

const database = useTestDatabase();
let store: RunStore;

beforeAll(async () => {
  store = new RunStore(database.db);
});

function setup(maxMessageLength = 4096) {
  const clock = new ManualClock(Date.parse('2026-11-29T10:00:00Z'));
  const channel = new RecordingChannel('telegram', maxMessageLength);
  const outbox = new Outbox({
    store,
    clock,
    logger: silentLogger(),
    adapters: new Map([['telegram', channel]]),
    policy,
  });
  const worker = startDeliveryWorker({ store, outbox, clock, logger: silentLogger(), tickMs: 3_600_000 });
  return { clock, channel, outbox, worker };
}

/** A run in its own worktree `cwd` whose `started` row says `startedBody`. */
async function createTestRun(clock: ManualClock, cwd: string, startedBody: string): Promise<RunId> {
  const run = await createRunRow(
    store,
    {
      task: 't',
      cwd,
      options: { timeoutMinutes: 1, progress: false },
      origin: { platform: 'telegram', chatId: '42', senderId: '1', messageId: '7' },
      supervisor: 'h:1',
    },
    { maxActive: 100, now: clock.now(), started: { target, body: startedBody } },
  );
  return run.id;
}

describe(`outbox (${testEngine})`, () => {
  it('doubles the backoff from 30 s and caps it at 30 min', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => backoffMs(n, policy) / 1000)).toEqual([
      30, 60, 120, 240, 480, 960, 1800, 1800,
    ]);
  });

  it('retries a failed send on schedule until it arrives, and only then', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick(); // settle the worker's first tick before failures are queued
      channel.failures.push({ kind: 'network' }, { kind: 'network' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: '[run hr_0123456789ab] hello' });
      expect(channel.sent).toEqual([]);
      expect((await store.outbox.getDelivery(row.id))?.attempts).toBe(1);

      clock.advance(29_000);
      expect(await worker.tick()).toBe(0); // not due before 30 s
      clock.advance(1_000);
      expect(await worker.tick()).toBe(1); // second attempt fails: next in 60 s
      expect((await store.outbox.getDelivery(row.id))?.attempts).toBe(2);
      clock.advance(59_000);
      expect(await worker.tick()).toBe(0);
      clock.advance(1_000);
      expect(await worker.tick()).toBe(1);
      expect(channel.sent.map((m) => m.text)).toEqual(['[run hr_0123456789ab] hello']);
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered', attempts: 2 });
      clock.advance(3_600_000);
      expect(await worker.tick()).toBe(0);
      expect(channel.sent).toHaveLength(1);
    } finally {
      await worker.stop();
    }
  });

  it('waits at least the retry_after a rate limit asks for', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      channel.failures.push({ kind: 'rate_limited', retryAfterMs: 90_000 });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'rate limited' });
      clock.advance(60_000);
      expect(await worker.tick()).toBe(0);
      clock.advance(30_000);
      expect(await worker.tick()).toBe(1);
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered' });
    } finally {
      await worker.stop();
    }
  });

  it('dead-letters after the attempt cap, keeps the row, never sends it', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      for (let i = 0; i < 10; i++) channel.failures.push({ kind: 'network' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'doomed' });
      for (let i = 0; i < 10; i++) {
        clock.advance(1_800_000);
        await worker.tick();
      }
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'dead', attempts: policy.maxAttempts });
      expect(channel.sent).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('dead-letters a row whose next attempt would fall past the age cap', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      channel.failures.push({ kind: 'network' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'too old' });
      clock.advance(policy.maxAgeMs);
      channel.failures.push({ kind: 'network' });
      await worker.tick();
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'dead', attempts: 2 });
    } finally {
      await worker.stop();
    }
  });

  it('resumes a split message after the parts already sent, in order', async () => {
    const { clock, channel, outbox, worker } = setup(100);
    try {
      await worker.tick();
      const body = `[run hr_0123456789ab] completed\n${Array.from({ length: 12 }, (_, i) => `line ${i} ${'x'.repeat(20)}`).join('\n')}`;
      channel.failures.push({ kind: 'network' });
      // The first attempt fails before any part; the retry sends every part.
      const row = await outbox.send({ runId: null, kind: 'reply', target, body });
      clock.advance(30_000);
      await worker.tick();
      const total = channel.sent.length;
      expect(total).toBeGreaterThan(3);
      expect(channel.sent[0]!.text.startsWith('[run hr_0123456789ab] completed')).toBe(true);
      expect(channel.sent.slice(1).map((m) => m.text.split('\n')[0])).toEqual(
        Array.from({ length: total - 1 }, (_, i) => `[run hr_0123456789ab] (${i + 2}/${total})`),
      );
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered', partsDelivered: total });

      const second = await store.outbox.enqueue({ runId: null, kind: 'reply', target, body }, clock.now());
      const failing = new RecordingChannel('telegram', 100);
      const flaky = new Outbox({
        store,
        clock,
        logger: silentLogger(),
        adapters: new Map([['telegram', failing]]),
        policy,
      });
      const sendOriginal = failing.send.bind(failing);
      let calls = 0;
      failing.send = async (m) => {
        calls += 1;
        if (calls === 3) throw new (await import('../../src/channels/types.js')).ChannelSendError('network', 'cut');
        return sendOriginal(m);
      };
      // A cut after two parts: the retry sends only the rest, each part exactly once.
      expect(await flaky.attempt(second)).toBe(false);
      expect((await store.outbox.getDelivery(second.id))?.partsDelivered).toBe(2);
      expect(await flaky.attempt((await store.outbox.getDelivery(second.id))!)).toBe(true);
      expect(failing.sent).toHaveLength(total);
      expect(new Set(failing.sent.map((m) => m.text)).size).toBe(total);
    } finally {
      await worker.stop();
    }
  });

  it('reshapes a part the platform rejects as malformed into smaller parts, at once', async () => {
    const { channel, outbox, worker } = setup(1000);
    try {
      await worker.tick();
      channel.failures.push({ kind: 'malformed' });
      const body = `[run hr_0123456789ab] completed\n${'w'.repeat(900)}`;
      const row = await outbox.send({ runId: null, kind: 'reply', target, body });
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered', attempts: 0 });
      expect(channel.sent.map((m) => m.text.length).every((n) => n <= 500)).toBe(true);
      expect(channel.sent.length).toBeGreaterThan(1);
    } finally {
      await worker.stop();
    }
  });

  it('numbers re-split parts as finally sent (1/n … n/n) and resumes on the same layout', async () => {
    const { clock, channel, outbox, worker } = setup(1000);
    try {
      await worker.tick();
      const body = `[run hr_0123456789ab] completed\n${Array.from({ length: 60 }, (_, i) => `line ${i} ${'z'.repeat(20)}`).join('\n')}`;
      const original = channel.send.bind(channel);
      let calls = 0;
      channel.send = async (m) => {
        calls += 1;
        // Part 2 is refused as too long once; later the network drops once after two more parts.
        if (calls === 2) throw new ChannelSendError('malformed', 'Bad Request: message is too long');
        if (calls === 5) throw new ChannelSendError('network', 'reset');
        return original(m);
      };
      const row = await outbox.send({ runId: null, kind: 'reply', target, body });
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'pending', partsDelivered: 3 });
      clock.advance(30_000);
      await worker.tick();
      const texts = channel.sent.map((m) => m.text);
      const n = texts.length;
      expect(n).toBeGreaterThan(3);
      expect(texts.slice(1).map((t) => t.split('\n')[0])).toEqual(
        Array.from({ length: n - 1 }, (_, i) => `[run hr_0123456789ab] (${i + 2}/${n})`),
      );
      expect(texts.map((t, i) => (i === 0 ? t : t.slice(t.indexOf('\n') + 1))).join('')).toBe(body);
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'delivered', partsDelivered: n });
    } finally {
      await worker.stop();
    }
  });

  it('dead-letters at once a message the platform refuses for good', async () => {
    const { channel, outbox, worker } = setup();
    try {
      await worker.tick();
      channel.failures.push({ kind: 'refused' });
      const row = await outbox.send({ runId: null, kind: 'reply', target, body: 'blocked' });
      expect(await store.outbox.getDelivery(row.id)).toMatchObject({ status: 'dead', attempts: 1 });
    } finally {
      await worker.stop();
    }
  });

  it('sends the messages of one run in the order they were asked for', async () => {
    const clock = new ManualClock(Date.parse('2026-11-29T11:00:00Z'));
    const order: string[] = [];
    const slow = new RecordingChannel();
    const original = slow.send.bind(slow);
    slow.send = async (m) => {
      if (m.text.includes('started')) await new Promise((r) => setTimeout(r, 200));
      order.push(m.text);
      return original(m);
    };
    const outbox = new Outbox({
      store,
      clock,
      logger: silentLogger(),
      adapters: new Map([['telegram', slow]]),
      policy,
    });
    const runId = await createTestRun(clock, '/order', '[run hr_x] started');
    const started = (await store.outbox.deliveriesOfRun(runId))[0]!;
    const outcome = await store.outbox.enqueue(
      { runId, kind: 'outcome', target, body: '[run hr_x] completed' },
      clock.now(),
    );
    await Promise.all([outbox.attempt(started), outbox.attempt(outcome)]);
    expect(order).toEqual(['[run hr_x] started', '[run hr_x] completed']);
  });

  it("holds a run's later message while its earlier one waits for a retry, then sends both in order", async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      // `started` meets a 5xx twice (retries at +30 s, then +90 s); the outcome is written meanwhile.
      channel.failures.push({ kind: 'network' });
      const runId = await createTestRun(clock, '/held', '[run hr_held] started');
      const started = (await store.outbox.deliveriesOfRun(runId))[0]!;
      expect(await outbox.attempt(started)).toBe(false);
      const outcome = await store.outbox.enqueue(
        { runId, kind: 'outcome', target, body: '[run hr_held] completed' },
        clock.now(),
      );
      expect(await outbox.attempt(outcome)).toBe(false);
      // Another run's message is not held up.
      const otherRun = await createTestRun(clock, '/other', '[run hr_other] started');
      expect(await outbox.attempt((await store.outbox.deliveriesOfRun(otherRun))[0]!)).toBe(true);
      expect(channel.sent.map((m) => m.text)).toEqual(['[run hr_other] started']);
      expect(await store.outbox.getDelivery(outcome.id)).toMatchObject({ status: 'pending', attempts: 0 });

      clock.advance(30_000);
      channel.failures.push({ kind: 'network' });
      expect(await worker.tick()).toBe(1); // only `started`; it fails again
      clock.advance(30_000);
      // The outcome is due by its own time now (+60 s), yet still waits for `started` (+90 s).
      expect(await worker.tick()).toBe(0);
      expect(channel.sent.map((m) => m.text)).toEqual(['[run hr_other] started']);

      clock.advance(30_000);
      expect(await worker.tick()).toBe(1);
      expect(channel.sent.map((m) => m.text)).toEqual([
        '[run hr_other] started',
        '[run hr_held] started',
        '[run hr_held] completed',
      ]);
      expect(await store.outbox.getDelivery(outcome.id)).toMatchObject({ status: 'delivered', attempts: 0 });
      clock.advance(3_600_000);
      expect(await worker.tick()).toBe(0);
      expect(channel.sent).toHaveLength(3);
    } finally {
      await worker.stop();
    }
  });

  it("releases a run's later message when the earlier one is dead-lettered", async () => {
    const { channel, outbox, worker } = setup();
    try {
      await worker.tick();
      const runId = await createTestRun(
        new ManualClock(Date.parse('2026-11-29T10:00:00Z')),
        '/dead',
        '[run hr_dead] started',
      );
      const started = (await store.outbox.deliveriesOfRun(runId))[0]!;
      const outcome = await store.outbox.enqueue(
        { runId, kind: 'outcome', target, body: '[run hr_dead] completed' },
        started.createdAt,
      );
      channel.failures.push({ kind: 'refused' });
      await outbox.attempt(started);
      await outbox.attempt(outcome);
      expect(await store.outbox.getDelivery(started.id)).toMatchObject({ status: 'dead' });
      expect(await store.outbox.getDelivery(outcome.id)).toMatchObject({ status: 'delivered' });
      expect(channel.sent.map((m) => m.text)).toEqual(['[run hr_dead] completed']);
    } finally {
      await worker.stop();
    }
  });

  it('drains a backlog without waiting a tick between full batches', async () => {
    const clock = new ManualClock(Date.parse('2026-11-29T13:00:00Z'));
    const channel = new RecordingChannel();
    const outbox = new Outbox({
      store,
      clock,
      logger: silentLogger(),
      adapters: new Map([['telegram', channel]]),
      policy,
    });
    for (let i = 0; i < 120; i++)
      await store.outbox.enqueue({ runId: null, kind: 'reply', target, body: `backlog ${i}` }, clock.now());
    clock.advance(INLINE_LEASE_MS);
    // An hour between ticks: only the backlog rule can drain 120 rows in batches of 50.
    const worker = startDeliveryWorker({
      store,
      outbox,
      clock,
      logger: silentLogger(),
      tickMs: 3_600_000,
      batchSize: 50,
    });
    try {
      for (let i = 0; i < 400 && channel.sent.filter((m) => m.text.startsWith('backlog ')).length < 120; i++)
        await new Promise((r) => setTimeout(r, 25));
      expect(channel.sent.filter((m) => m.text.startsWith('backlog '))).toHaveLength(120);
    } finally {
      await worker.stop();
    }
  });

  it('claims ahead while a backlog lasts: one slow send holds up no row claimed after it', async () => {
    const clock = new ManualClock(Date.parse('2026-11-29T14:00:00Z'));
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    /** Holds the send of `slow` until released. */
    class HoldingChannel extends RecordingChannel {
      override async send(message: Parameters<RecordingChannel['send']>[0]): Promise<{ messageId: string }> {
        if (message.text === 'slow') await held;
        return super.send(message);
      }
    }
    const channel = new HoldingChannel();
    const outbox = new Outbox({
      store,
      clock,
      logger: silentLogger(),
      adapters: new Map([['telegram', channel]]),
      policy,
    });
    // `slow` is the oldest, so the first claim takes it.
    await store.outbox.enqueue({ runId: null, kind: 'reply', target, body: 'slow' }, clock.now());
    clock.advance(1);
    for (let i = 0; i < 11; i++)
      await store.outbox.enqueue({ runId: null, kind: 'reply', target, body: `ahead ${i}` }, clock.now());
    clock.advance(INLINE_LEASE_MS);
    // Batches of 4 on 2 lanes: before, the worker claimed again only once a whole batch was sent,
    // so the rows after `slow`'s batch waited for it (3 sent, then nothing).
    const worker = startDeliveryWorker({
      store,
      outbox,
      clock,
      logger: silentLogger(),
      tickMs: 3_600_000,
      batchSize: 4,
      concurrency: 2,
    });
    try {
      for (let i = 0; i < 400 && channel.sent.length < 11; i++) await new Promise((r) => setTimeout(r, 25));
      expect(channel.sent.map((m) => m.text).sort()).toEqual(Array.from({ length: 11 }, (_, i) => `ahead ${i}`).sort());
      release();
      for (let i = 0; i < 400 && channel.sent.length < 12; i++) await new Promise((r) => setTimeout(r, 25));
      expect(channel.sent.at(-1)?.text).toBe('slow');
    } finally {
      release();
      await worker.stop();
    }
  });

  it('never lets two workers send one row at the same time', async () => {
    const clock = new ManualClock(Date.parse('2026-11-29T12:00:00Z'));
    const channel = new RecordingChannel();
    const outbox = new Outbox({
      store,
      clock,
      logger: silentLogger(),
      adapters: new Map([['telegram', channel]]),
      policy,
    });
    const rows = [];
    for (let i = 0; i < 60; i++)
      rows.push(await store.outbox.enqueue({ runId: null, kind: 'reply', target, body: `bulk ${i}` }, clock.now()));
    clock.advance(INLINE_LEASE_MS);
    const workers = [1, 2, 3].map(() =>
      startDeliveryWorker({ store, outbox, clock, logger: silentLogger(), tickMs: 3_600_000, batchSize: 7 }),
    );
    try {
      for (let round = 0; round < 5; round++) await Promise.all(workers.map((w) => w.tick()));
      const bulk = channel.sent.filter((m) => m.text.startsWith('bulk '));
      expect(bulk).toHaveLength(60);
      expect(new Set(bulk.map((m) => m.text)).size).toBe(60);
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });
});
