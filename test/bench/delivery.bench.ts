/**
 * Scenario 3, delivery throughput: 10,000 due outcome deliveries (smoke: 200) drained by baton's
 * retry worker through the Outbox and the real TelegramAdapter (grammY) into the fake Bot API,
 * with 5% of `sendMessage` calls failing; and the plan of the worker's claim query
 * (`FOR UPDATE SKIP LOCKED`) over 1,000,000 delivery rows (smoke: 10,000) on PostgreSQL.
 *
 * In-process: RunStore, Outbox and startDeliveryWorker from src/, on a fresh PostgreSQL database.
 * The claim SQL is the one RunStore.claimDueDeliveries sends, captured through drizzle's logger.
 */
import os from 'node:os';
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TelegramAdapter } from '../../src/channels/telegram/adapter.js';
import type { ChannelAdapter, Platform } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { newRunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox, type OutboxPolicy } from '../../src/delivery/outbox.js';
import { startDeliveryWorker } from '../../src/delivery/worker.js';
import { openDatabase, type Database, type Db } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { createPostgresDatabase } from '../support/database.js';
import { atLeast, exactly, size, beginScenario, type TargetCheck } from './support/results.js';
import { round, summary } from './support/stats.js';
import { startTelegramTap, type InjectedFailure, type TelegramTap } from './support/telegram-tap.js';
import { OWNER, postgresAdminUrl, TELEGRAM_TOKEN } from './support/world.js';

/** The policy buildRuntime gives the Outbox, except the first backoff (see the notes). */
const PRODUCTION_POLICY: OutboxPolicy = {
  backoffBaseMs: 30_000,
  backoffCapMs: 1_800_000,
  maxAttempts: 20,
  maxAgeMs: 86_400_000,
};
const BENCH_BACKOFF_BASE_MS = 1_000;
/** Worker tick while draining: back-to-back batches (the production tick is 30 s). */
const DRAIN_TICK_MS = 10;

let telegram: FakeTelegram;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
  cleanups.push(() => telegram.close());
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
});

/**
 * A fresh migrated PostgreSQL database, dropped after the file, opened as the service opens
 * `DATABASE_URL` (buildRuntime: the default pool of 10 connections; the bench had 4 before).
 */
async function freshDatabase(): Promise<{ database: Database; url: string }> {
  const created = await createPostgresDatabase(postgresAdminUrl());
  const database = await openDatabase({ url: created.url });
  cleanups.push(async () => {
    await database.close();
    await created.drop();
  });
  return { database, url: created.url };
}

/** Inserts `count` completed runs, each with one due outcome delivery. */
async function seedDueOutcomes(db: Db, count: number, firstMessageId: number): Promise<void> {
  const now = new Date();
  const due = new Date(now.getTime() - 1_000);
  for (let offset = 0; offset < count; offset += 500) {
    const batch = Array.from({ length: Math.min(500, count - offset) }, (_, i) => {
      const id = newRunId();
      const messageId = String(firstMessageId + offset + i);
      return {
        run: {
          id,
          vendor: 'codex' as const,
          status: 'completed' as const,
          task: 'fix the failing test',
          cwd: '/home/bench/code/app',
          worktreeRoot: '/home/bench/code/app',
          options: { timeoutMinutes: 30, progress: false },
          origin: { platform: 'telegram', chatId: String(OWNER), senderId: String(OWNER), messageId },
          supervisor: 'bench:1',
          createdAt: now,
          endedAt: now,
        },
        delivery: {
          runId: id,
          kind: 'outcome',
          target: { platform: 'telegram', chatId: String(OWNER), replyToMessageId: messageId },
          body: `[run ${id}] completed · codex · /home/bench/code/app · 1m 12s · 9,600 tokens (8,400 in, 1,200 out)\n\n${'Fixed the off-by-one in pager.ts; the test passes now. '.repeat(6)}`,
          nextAttemptAt: due,
          createdAt: now,
        },
      };
    });
    await db.insert(schema.runs).values(batch.map((b) => b.run));
    await db.insert(schema.deliveries).values(batch.map((b) => b.delivery));
  }
}

/** Delivery counts by status. */
async function statusCounts(db: Db): Promise<Record<string, number>> {
  const rows = await db.execute<{ status: string; n: number }>(
    sql`select status::text as status, count(*)::int as n from deliveries group by status`,
  );
  const list = (Array.isArray(rows) ? rows : (rows as { rows: { status: string; n: number }[] }).rows) as {
    status: string;
    n: number;
  }[];
  return Object.fromEntries(list.map((r) => [r.status, Number(r.n)]));
}

interface DrainResult {
  rows: number;
  failureKind: InjectedFailure;
  seconds: number;
  msgsPerS: number;
  injectedFailures: number;
  sendCalls: number;
  finalCounts: Record<string, number>;
  duplicates: number;
  /**
   * CPU time of this process (worker, grammY, the fake Bot API and the tap: all in-process) per
   * delivered row, in ms: unlike msg/s it does not depend on how busy the shared machine is.
   */
  cpuMsPerMsg: number;
  /** Rows delivered per second of this process's CPU time: the drain rate on one free core, PostgreSQL aside. */
  msgsPerCpuS: number;
  /** Deliveries per second between the 10th and the 90th percentile of delivery times: the loop's pace without the retry tail. */
  steadyMsgsPerS: number;
  sendMs: ReturnType<typeof summary>;
}

/**
 * Seeds `rows` due outcomes on a fresh database, then runs the worker until every one reached the
 * fake; `sendMessage` fails with probability `rate` as `kind`.
 */
async function drain(
  rows: number,
  rate: number,
  kind: InjectedFailure,
  policy: OutboxPolicy,
  tickMs: number,
): Promise<DrainResult> {
  const { database } = await freshDatabase();
  const store = new RunStore(database.db);
  const tap: TelegramTap = await startTelegramTap(telegram.url);
  cleanups.push(() => tap.close());
  tap.failSendMessages(rate, kind);
  const adapter = new TelegramAdapter({
    token: TELEGRAM_TOKEN,
    apiRoot: tap.url,
    clock: systemClock,
    logger: silentLogger(),
  });
  const sendDurations: number[] = [];
  const deliveredAtMs: number[] = [];
  const timed: ChannelAdapter = {
    platform: adapter.platform,
    maxMessageLength: adapter.maxMessageLength,
    start: (h) => adapter.start(h),
    stop: () => adapter.stop(),
    status: () => adapter.status(),
    send: async (message) => {
      const t0 = performance.now();
      try {
        const sent = await adapter.send(message);
        deliveredAtMs.push(performance.now());
        return sent;
      } finally {
        sendDurations.push(performance.now() - t0);
      }
    },
  };
  const logger = silentLogger();
  const outbox = new Outbox({
    store,
    clock: systemClock,
    logger,
    adapters: new Map<Platform, ChannelAdapter>([['telegram', timed]]),
    policy,
  });
  const firstMessageId = 1_000_000 + telegram.sent.length * 10;
  await seedDueOutcomes(database.db, rows, firstMessageId);
  const sentBefore = telegram.sent.length;

  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const worker = startDeliveryWorker({ store, outbox, clock: systemClock, logger, tickMs });
  await telegram.waitForSent(() => telegram.sent.length - sentBefore >= rows, 3_600_000);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  await worker.stop();
  const mine = telegram.sent.slice(sentBefore);
  const distinct = new Set(mine.map((m) => (m.reply_parameters as { message_id?: number } | undefined)?.message_id));
  return {
    rows,
    failureKind: kind,
    seconds: round(seconds, 2),
    msgsPerS: round(rows / seconds, 1),
    injectedFailures: tap.injectedFailures,
    sendCalls: tap.sendCalls,
    finalCounts: await statusCounts(database.db),
    duplicates: mine.length - distinct.size,
    steadyMsgsPerS: steadyRate(deliveredAtMs),
    cpuMsPerMsg: round(cpuMs / rows, 3),
    msgsPerCpuS: round((rows * 1000) / cpuMs, 1),
    sendMs: summary(sendDurations),
  };
}

function steadyRate(times: number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  const from = Math.floor(sorted.length * 0.1);
  const to = Math.floor(sorted.length * 0.9);
  const spanMs = (sorted[to] ?? 0) - (sorted[from] ?? 0);
  return spanMs > 0 ? round(((to - from) * 1000) / spanMs, 1) : Number.NaN;
}

/** Node types and index names of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(plan: unknown): { nodeTypes: string[]; indexes: string[]; seqScans: string[] } {
  const nodeTypes: string[] = [];
  const indexes: string[] = [];
  const seqScans: string[] = [];
  const walk = (node: Record<string, unknown>): void => {
    const type = String(node['Node Type']);
    nodeTypes.push(type);
    if (typeof node['Index Name'] === 'string') indexes.push(node['Index Name']);
    if (type === 'Seq Scan') seqScans.push(String(node['Relation Name']));
    for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(plan as Record<string, unknown>);
  return { nodeTypes, indexes, seqScans };
}

describe('delivery', () => {
  it('drains due deliveries with 5% failures and keeps the claim query on its index', async () => {
    const scenario = await beginScenario('delivery_throughput', 'Delivery throughput and the claim query plan');
    const rows = size('DELIVERY_ROWS', 10_000, 200);
    const serverErrorRows = size('DELIVERY_5XX_ROWS', 400, 20);
    const planRows = size('PLAN_ROWS', 1_000_000, 10_000);
    const benchPolicy: OutboxPolicy = { ...PRODUCTION_POLICY, backoffBaseMs: BENCH_BACKOFF_BASE_MS };

    // A. The headline: failures are cut connections (grammY HttpError → outbox backoff).
    const network = await phase('drain A', () => drain(rows, 0.05, 'network', benchPolicy, DRAIN_TICK_MS));
    // B. The same with HTTP 500s, on fewer rows: see the notes.
    const serverError = await phase('drain B', () =>
      drain(serverErrorRows, 0.05, 'server_error', benchPolicy, DRAIN_TICK_MS),
    );

    // C. The worker as the service starts it (default tick and batch): how fast a backlog goes out.
    const cadence = await phase('cadence', async () => {
      const { database } = await freshDatabase();
      const store = new RunStore(database.db);
      const logger = silentLogger();
      const adapter = new TelegramAdapter({ token: TELEGRAM_TOKEN, apiRoot: telegram.url, clock: systemClock, logger });
      const outbox = new Outbox({
        store,
        clock: systemClock,
        logger,
        adapters: new Map<Platform, ChannelAdapter>([['telegram', adapter]]),
        policy: PRODUCTION_POLICY,
      });
      const backlog = 200;
      const windowMs = 5_000;
      await seedDueOutcomes(database.db, backlog, 5_000_000);
      const sentBefore = telegram.sent.length;
      const t0 = performance.now();
      const worker = startDeliveryWorker({ store, outbox, clock: systemClock, logger });
      await telegram.waitForSent(() => telegram.sent.length - sentBefore >= backlog, windowMs).catch(() => undefined);
      const elapsedMs = performance.now() - t0;
      const sent = telegram.sent.length - sentBefore;
      await worker.stop();
      return {
        backlog,
        windowMs,
        sentInWindow: sent,
        allSentAfterMs: sent >= backlog ? Math.round(elapsedMs) : null,
        defaults: 'tickMs 30000, batchSize 50',
      };
    });

    // D. The claim query's plan at scale.
    const plan = await phase('plan', async () => {
      const { url } = await freshDatabase();
      const client = postgres(url, {
        max: 2,
        onnotice: () => {},
        ...(process.env.BENCH_DEBUG
          ? {
              debug: (_c: number, q: string, p: unknown[]) =>
                console.log('SQL', q.slice(0, 120), JSON.stringify(p).slice(0, 120)),
            }
          : {}),
      });
      cleanups.push(() => client.end({ timeout: 5 }));
      const captured: { query: string; params: unknown[] }[] = [];
      const db = drizzle(client, {
        schema,
        logger: { logQuery: (query, params) => void captured.push({ query, params }) },
      }) as unknown as Db;
      await seedDueOutcomes(db, 1, 9_000_000);
      const claimed = await new RunStore(db).outbox.claimDueDeliveries(new Date(), 50, 300_000);
      expect(claimed).toHaveLength(1);
      const select = captured.find((c) => /for update skip locked/i.test(c.query));
      const update = captured.find((c) => /^update "deliveries" set "next_attempt_at"/i.test(c.query));
      if (process.env.BENCH_DEBUG) console.log(captured.map((c) => c.query).join('\n'));
      if (!select || !update)
        throw new Error(`claim statements not captured: ${captured.map((c) => c.query).join('\n')}`);
      await client.unsafe('delete from deliveries; delete from runs');

      const seedStartedMs = performance.now();
      // Steady state: almost everything delivered, a few hundred pending (half due), some dead.
      await client.unsafe(
        `insert into deliveries (run_id, kind, target, body, status, attempts, next_attempt_at, created_at, delivered_at)
         select null, 'outcome', '{"platform":"telegram","chatId":"111","replyToMessageId":"1"}'::jsonb,
                '[run hr_000000000000] completed · codex · /home/bench/code/app · 1m 12s' || repeat(' answer', 40),
                (case when g % 1000 = 0 then 'pending' when g % 1000 = 1 then 'dead' else 'delivered' end)::delivery_status,
                (case when g % 1000 = 0 then g % 5 else 1 end),
                now() - make_interval(secs => $1 - g) + (case when g % 2000 = 0 then interval '1 hour' else interval '0' end),
                now() - make_interval(secs => $1 - g),
                (case when g % 1000 > 1 then now() - make_interval(secs => $1 - g) end)
         from generate_series(1, $1::int) g`,
        [planRows],
      );
      await client.unsafe('analyze deliveries');
      const seedSeconds = round((performance.now() - seedStartedMs) / 1000, 1);
      const explain = async (
        statement: { query: string; params: unknown[] },
        params: unknown[],
      ): Promise<{ plan: unknown; executionMs: number }> => {
        let result: { plan: unknown; executionMs: number } | undefined;
        await client
          .begin(async (tx) => {
            const out = await tx.unsafe(
              `explain (analyze, buffers, format json) ${statement.query}`,
              params as never[],
            );
            const json = (out[0] as Record<string, unknown>)['QUERY PLAN'] as {
              Plan: unknown;
              'Execution Time': number;
            }[];
            result = { plan: json[0]!.Plan, executionMs: json[0]!['Execution Time'] };
            throw new RollbackSignal();
          })
          .catch((err: unknown) => {
            if (!(err instanceof RollbackSignal)) throw err;
          });
        return result!;
      };
      const nowIso = new Date().toISOString();
      const selectParams = select.params.map((p) =>
        typeof p === 'string' && /^\d{4}-\d\d-\d\dT/.test(p) ? nowIso : p,
      );
      const steady = await explain(select, selectParams);
      // Backlog: a tenth of all rows pending and due (a long platform outage).
      await client.unsafe(
        `update deliveries set status = 'pending', next_attempt_at = now() - interval '1 minute' where id % 10 = 3`,
      );
      await client.unsafe('analyze deliveries');
      const backlog = await explain(select, selectParams);
      const ids = (
        await client.unsafe(`select id from deliveries where status = 'pending' order by next_attempt_at limit 50`)
      ).map((r) => Number((r as unknown as { id: number }).id));
      const updateParams = [nowIso, ...ids];
      const updateQuery = {
        query: update.query.replace(/in \(\$2(, \$\d+)*\)/, () => `in (${ids.map((_, i) => `$${i + 2}`).join(', ')})`),
        params: updateParams,
      };
      const lease = await explain(updateQuery, updateParams);
      // The claim writes 'pending' as a literal, so a cached generic plan can use the partial index.
      const generic = await (async () => {
        let nodes: ReturnType<typeof planNodes> | undefined;
        await client
          .begin(async (tx) => {
            await tx.unsafe(`prepare bench_claim as ${select.query}`);
            await tx.unsafe('set local plan_cache_mode = force_generic_plan');
            const out = await tx.unsafe(`explain (format json) execute bench_claim('${nowIso}', 50)`);
            nodes = planNodes(((out[0] as Record<string, unknown>)['QUERY PLAN'] as { Plan: unknown }[])[0]!.Plan);
            throw new RollbackSignal();
          })
          .catch((err: unknown) => {
            if (!(err instanceof RollbackSignal)) throw err;
          });
        return nodes!;
      })();
      // What the default plan_cache_mode (auto) does after repeated executions of the prepared claim.
      const autoMode = await (async () => {
        let counts: { generic_plans: number; custom_plans: number } | undefined;
        await client
          .begin(async (tx) => {
            await tx.unsafe(`prepare bench_claim_auto as ${select.query}`);
            for (let i = 0; i < 10; i++) await tx.unsafe(`execute bench_claim_auto('${nowIso}', 50)`);
            const rows = await tx.unsafe(
              `select generic_plans::int, custom_plans::int from pg_prepared_statements where name = 'bench_claim_auto'`,
            );
            counts = rows[0] as unknown as { generic_plans: number; custom_plans: number };
            throw new RollbackSignal();
          })
          .catch((err: unknown) => {
            if (!(err instanceof RollbackSignal)) throw err;
          });
        return counts!;
      })();
      const counts = (
        await client.unsafe(
          `select status::text as status, count(*)::int as n from deliveries group by status order by status`,
        )
      ).map((r) => r as unknown as { status: string; n: number });
      return {
        rows: planRows,
        seedSeconds,
        claimSql: select.query,
        steadyState: {
          pendingRows: Math.floor(planRows / 1000),
          ...planNodes(steady.plan),
          executionMs: round(steady.executionMs, 3),
        },
        backlog: { counts, ...planNodes(backlog.plan), executionMs: round(backlog.executionMs, 3) },
        leaseUpdate: { ...planNodes(lease.plan), executionMs: round(lease.executionMs, 3) },
        genericPlan: generic,
        autoPlanCacheAfter10Executions: autoMode,
        plans: { steady: steady.plan, backlog: backlog.plan, lease: lease.plan },
      };
    });

    const planOk = (p: { seqScans: string[]; indexes: string[] }): boolean =>
      p.seqScans.length === 0 && p.indexes.includes('deliveries_due');
    const checks: TargetCheck[] = [
      atLeast(`drain msgs/s (${rows} rows, 5% cut connections)`, network.msgsPerS, 500, 'msg/s'),
      {
        metric: 'drain rows per CPU-second of the bench process',
        value: network.msgsPerCpuS,
        unit: 'msg/s',
        target: 'reported',
        met: true,
      },
      exactly('undelivered rows after drain', (network.finalCounts.pending ?? 0) + (network.finalCounts.dead ?? 0), 0),
      {
        metric: `claim plan at ${planRows} rows (steady)`,
        value: null,
        unit: '',
        target: 'index scan, no seq scan',
        met: planOk(plan.steadyState),
      },
      {
        metric: `claim plan at ${planRows} rows (10% backlog)`,
        value: null,
        unit: '',
        target: 'index scan, no seq scan',
        met: planOk(plan.backlog),
      },
      {
        metric: `claim plan at ${planRows} rows (force_generic_plan)`,
        value: null,
        unit: '',
        target: 'index scan, no seq scan',
        met: planOk(plan.genericPlan),
      },
    ];
    const notes = [
      `Measured in-process: RunStore + Outbox + startDeliveryWorker from src/ on a fresh PostgreSQL database, the real TelegramAdapter (grammY) sending to the fake Bot API through a tap that fails 5% of sendMessage calls (every 20th). Rate limits off: the fake never answers 429.`,
      `Bench settings, not production: the worker ticks every ${DRAIN_TICK_MS} ms (the service's worker ticks every 30 s) and the first retry backoff is ${BENCH_BACKOFF_BASE_MS} ms (the service's is 30 s), so the number is the drain capacity of the claim → send → record loop, not the configured waits.`,
      cadence.allSentAfterMs !== null
        ? `With the worker's defaults (as the service starts it) a backlog of ${cadence.backlog} rows went out in ${cadence.allSentAfterMs} ms.`
        : `With the worker's defaults (as the service starts it) only ${cadence.sentInWindow} of ${cadence.backlog} due rows went out in ${cadence.windowMs / 1000} s: the worker sends one batch per tick and waits for the next tick even with a backlog, so 10,000 pending rows would take about ${Math.round(((10_000 / 50) * 30) / 60)} minutes at 50 rows per 30 s.`,
      serverError.sendMs.max >= 2_500
        ? `With HTTP 500s instead of cut connections (${serverErrorRows} rows, ${serverError.injectedFailures} failed calls): ${serverError.msgsPerS} msg/s; the slowest send took ${Math.round(serverError.sendMs.max)} ms: the adapter waits inside send() before retrying a 5xx (grammY auto-retry), holding up the rows queued behind it.`
        : `With HTTP 500s instead of cut connections (${serverErrorRows} rows, ${serverError.injectedFailures} failed calls): ${serverError.msgsPerS} msg/s; the slowest send took ${Math.round(serverError.sendMs.max)} ms.`,
      `CPU of this process per delivered row ${network.cpuMsPerMsg} ms (${network.msgsPerCpuS} rows per CPU-second; the worker, grammY, the fake Bot API and the tap all run here), the figure that does not move with the machine's load; load average ${os.loadavg()[0]!.toFixed(1)} at the end of the drain.`,
      `Median send ${network.sendMs.p50} ms, p95 ${network.sendMs.p95} ms (each delivered row is then recorded by recordPartsSent, rows recorded meanwhile by other lanes in the same statement); steady pace without the retry tail ${network.steadyMsgsPerS} msg/s. Injected failures: every 20th sendMessage call (${network.injectedFailures} of ${network.sendCalls}).`,
    ];
    if (plan.genericPlan.seqScans.length > 0 || !plan.genericPlan.indexes.includes('deliveries_due')) {
      notes.push(
        `The claim query binds status = 'pending' as a parameter ($1). Its custom plans use the partial index deliveries_due, but a generic plan cannot prove the index predicate: under plan_cache_mode = force_generic_plan it becomes ${plan.genericPlan.nodeTypes.join(' → ')}${plan.genericPlan.seqScans.length > 0 ? ' (a seq scan)' : ''}. With the default plan_cache_mode (auto), 10 executions of the prepared claim used ${plan.autoPlanCacheAfter10Executions.custom_plans} custom and ${plan.autoPlanCacheAfter10Executions.generic_plans} generic plans, so this is latent (a re-plan per execution), not a seq scan today; a literal 'pending' in the SQL would make the generic plan use the index too.`,
      );
    }
    if (network.msgsPerS < 500)
      notes.push(
        `Drain rate ${network.msgsPerS} msg/s is below the 500 msg/s target even with bench ticks (steady ${network.steadyMsgsPerS} msg/s without the retry tail): each row costs an HTTP round trip plus its share of a recordPartsSent statement.`,
      );

    await scenario.save({
      numbers: {
        drainCutConnections: network,
        drainServerErrors: serverError,
        productionCadence: cadence,
        claimPlan: plan,
      },
      checks,
      notes,
    });
    expect(network.finalCounts.delivered).toBe(rows);
  });
});

class RollbackSignal extends Error {}

/** Runs one phase; a failure names the phase. */
async function phase<T>(name: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (err) {
    throw new Error(`delivery bench, phase ${name}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}
