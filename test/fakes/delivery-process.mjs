#!/usr/bin/env node
// One "service process" of the two-process delivery test: opens the database argv[2] through
// the built store, sends through the real Telegram adapter (grammY) to the fake Bot API at
// argv[3] with token argv[4], and runs retry-worker ticks until a tick finds nothing due.
import { openDatabase } from '../../dist/store/database.js';
import { RunStore } from '../../dist/store/runs-repo.js';
import { Outbox } from '../../dist/delivery/outbox.js';
import { startDeliveryWorker } from '../../dist/delivery/worker.js';
import { TelegramAdapter } from '../../dist/channels/telegram/adapter.js';
import { systemClock } from '../../dist/core/clock.js';
import { silentLogger } from '../../dist/core/logger.js';

const [url, apiRoot, token] = process.argv.slice(2);
const database = await openDatabase({ url, maxConnections: 4 });
const store = new RunStore(database.db);
const logger = silentLogger();
const telegram = new TelegramAdapter({ token, apiRoot, clock: systemClock, logger });
const outbox = new Outbox({
  store,
  clock: systemClock,
  logger,
  adapters: new Map([['telegram', telegram]]),
  policy: { backoffBaseMs: 1, backoffCapMs: 1, maxAttempts: 100, maxAgeMs: 3_600_000 },
});
const worker = startDeliveryWorker({
  store,
  outbox,
  clock: systemClock,
  logger,
  tickMs: 3_600_000,
  batchSize: 10,
  leaseMs: 60_000,
});
let attempted = 0;
for (;;) {
  const n = await worker.tick();
  attempted += n;
  if (n === 0 && (await store.outbox.counts()).pendingDeliveries === 0) break;
  if (n === 0) await new Promise((r) => setTimeout(r, 20));
}
await worker.stop();
await database.close();
process.stdout.write(`${JSON.stringify({ attempted })}\n`);
