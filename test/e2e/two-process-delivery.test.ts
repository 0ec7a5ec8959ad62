/**
 * Two service processes on one PostgreSQL database drain 500 pending deliveries through the real
 * grammY client to the fake Bot API, with injected 500s and a 429: every message arrives, and
 * none is sent twice (PRODUCT.md §9, rows claimed with FOR UPDATE SKIP LOCKED).
 */
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { createPostgresDatabase } from '../support/database.js';

const WORKER = fileURLToPath(new URL('../fakes/delivery-process.mjs', import.meta.url));
const TOKEN = '654321:TEST-token-two-process-delivery';

describe.runIf(process.env.DATABASE_URL)('two processes, 500 deliveries (postgres)', () => {
  let url: string;
  let drop: () => Promise<void>;
  let database: Database;
  let telegram: FakeTelegram;

  beforeAll(async () => {
    ({ url, drop } = await createPostgresDatabase(process.env.DATABASE_URL!));
    database = await openDatabase({ url });
    telegram = await startFakeTelegram({ token: TOKEN });
  });
  afterAll(async () => {
    await telegram?.close();
    await database?.close();
    await drop?.();
  });

  it('delivers each exactly once', async () => {
    const store = new RunStore(database.db);
    // Written just over the inline lease ago, so the retry workers may claim them now.
    const past = new Date(Date.now() - 61_000);
    for (let i = 0; i < 500; i++) {
      await store.outbox.enqueue(
        { runId: null, kind: 'reply', target: { platform: 'telegram', chatId: '77' }, body: `bulk message ${i}` },
        past,
      );
    }
    for (let i = 0; i < 5; i++) telegram.failNext('sendMessage', { status: 500 });
    telegram.failNext('sendMessage', {
      status: 429,
      body: {
        ok: false,
        error_code: 429,
        description: 'Too Many Requests: retry after 1',
        parameters: { retry_after: 1 },
      },
    });

    const [a, b] = await Promise.all([
      execa(process.execPath, [WORKER, url, telegram.url, TOKEN], { timeout: 120_000 }),
      execa(process.execPath, [WORKER, url, telegram.url, TOKEN], { timeout: 120_000 }),
    ]);
    const attempted = [a, b].map((r) => (JSON.parse(String(r.stdout)) as { attempted: number }).attempted);
    // Both processes took part (neither starved), and together they attempted every row.
    expect(attempted.every((n) => n > 0)).toBe(true);

    const texts = telegram.sent.map((m) => m.text).filter((t) => t.startsWith('bulk message '));
    expect(texts).toHaveLength(500);
    expect(new Set(texts).size).toBe(500);
    expect(await store.outbox.counts()).toMatchObject({ pendingDeliveries: 0, deadLetters: 0 });
  });
});
