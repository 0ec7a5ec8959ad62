#!/usr/bin/env node
/**
 * Issue #16 item 6: PostgreSQL job-queue engines measured beside baton's own outbox claim.
 *
 *   npm install --no-save pg-boss@12.38.0 graphile-worker@0.18.0   # not dependencies: both need Node >= 22
 *   npm run build && DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node test/bench/queue-engines.mjs
 *
 * Creates one scratch database per engine on the server DATABASE_URL names (the user must be
 * allowed to CREATE DATABASE), drops them at the end, and refuses a server off loopback. Prints a
 * markdown table and the raw figures as JSON. Bounded: each phase has its own timeout and the whole
 * run stays under ~5 minutes on a loaded 2-core machine.
 *
 * Engines:
 * - baton: the real `RunStore.claimDueDeliveries` (dist/, FOR UPDATE SKIP LOCKED + a lease moving
 *   `next_attempt_at`) on the real migrated schema, polled (baton has no LISTEN/NOTIFY; in the
 *   service the first attempt is inline and the retry worker ticks every 30 s).
 * - pg-boss: queues per node, optional LISTEN/NOTIFY (`useListenNotify` + queue `notify`), expiry.
 * - graphile-worker: LISTEN/NOTIFY, task identifiers per node, enqueue from SQL (`add_job`).
 *
 * Child mode (used for the kill -9 phase): `node queue-engines.mjs --child <engine> <url>` starts a
 * worker whose handler prints `START <key>` and never finishes, so the parent can kill it mid-job.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, lstatSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const LATENCY_SAMPLES = Number(process.env.QBENCH_LATENCY_SAMPLES ?? 20);
const THROUGHPUT_JOBS = Number(process.env.QBENCH_JOBS ?? 10_000);
const WORKERS = 8;
/** Lease / expiry used in the kill -9 phase, in seconds (production: baton 300 s, pg-boss 900 s). */
const LEASE_S = 10;
/** Poll interval when an engine polls, in ms (baton's retry worker ticks every 30 s in production). */
const POLL_MS = 1000;

const { Logger: GwLogger } = await import('graphile-worker');
const quietGw = new GwLogger(() => () => {});

// ---------------------------------------------------------------- helpers

function pct(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}
const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : 'n/a');

async function waitFor(check, timeoutMs, stepMs = 20) {
  const until = performance.now() + timeoutMs;
  while (performance.now() < until) {
    if (await check()) return true;
    await sleep(stepMs);
  }
  return false;
}

function urlFor(base, database) {
  const u = new URL(base);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin(base) {
  const { default: postgres } = await import('postgres');
  return postgres(urlFor(base, 'postgres'), { max: 1, onnotice: () => {} });
}

// ---------------------------------------------------------------- engines
// Each engine: start(url, { onJob, node?, listen? }) -> { stop() }, enqueue(key, node?), bulk(n),
// and kill-phase helpers. `onJob(key, workerTag)` is called when a worker starts a job.

const engines = {
  baton: {
    async open(url) {
      const { openDatabase } = await import(join(ROOT, 'dist/store/database.js'));
      const { RunStore } = await import(join(ROOT, 'dist/store/runs-repo.js'));
      const { deliveries } = await import(join(ROOT, 'dist/store/schema.js'));
      const database = await openDatabase(url === 'pglite' ? { memory: true } : { url, maxConnections: WORKERS + 2 });
      const store = new RunStore(database.db);
      const { sql } = await import('drizzle-orm');
      return {
        database,
        store,
        // store.outbox.enqueue() makes the new row due only after the inline first attempt's lease (the
        // writing process sends it itself); a row another node must pick up is due now.
        async enqueue(key) {
          await database.db.insert(deliveries).values({
            runId: null,
            kind: 'notice',
            target: { platform: 'telegram', chatId: '1' },
            body: key,
            nextAttemptAt: new Date(),
            createdAt: new Date(),
          });
        },
        async bulk(n) {
          await database.db.execute(
            sql.raw(
              `insert into deliveries (run_id, kind, target, body, next_attempt_at, created_at)
             select null, 'notice', '{"platform":"telegram","chatId":"1"}'::jsonb, 'bulk-' || g, now(), now()
             from generate_series(1, ${Number(n)}) g`,
            ),
          );
        },
        /** A claim loop as one node's delivery worker runs it: claim a batch, handle each, complete. */
        work({ onJob, pollMs = POLL_MS, leaseMs = 300_000, batch = 50, complete = true }) {
          let stopped = false;
          const done = (async () => {
            while (!stopped) {
              const rows = await store.outbox.claimDueDeliveries(new Date(), batch, leaseMs);
              for (const row of rows) {
                await onJob(row.body);
                if (complete) await store.outbox.recordPartsSent(row, 1, [], true, new Date());
              }
              if (rows.length < batch && !stopped) await sleep(pollMs);
            }
          })();
          return {
            stop: async () => {
              stopped = true;
              await done;
            },
          };
        },
        close: () => database.close(),
      };
    },
  },

  pgboss: {
    async open(url, { listen = true, supervise = true } = {}) {
      const { PgBoss, fromPglite } = await import('pg-boss');
      let pglite;
      // Supervision (expiry of a dead worker's job) every second here; pg-boss's default is 60 s.
      const base = {
        schedule: false,
        supervise,
        superviseIntervalSeconds: 1,
        monitorIntervalSeconds: 1,
        maintenanceIntervalSeconds: 1,
        migrate: true,
        useListenNotify: listen,
      };
      let opts;
      if (url === 'pglite') {
        const { PGlite } = await import('@electric-sql/pglite');
        pglite = new PGlite();
        opts = { ...base, db: fromPglite(pglite), backend: 'pglite' };
      } else {
        opts = { ...base, connectionString: url, max: WORKERS + 2 };
      }
      const boss = new PgBoss(opts);
      boss.on('error', (err) => console.error('pg-boss error:', err.message));
      await boss.start();
      const queues = new Set();
      const queue = async (name) => {
        if (queues.has(name)) return;
        await boss.createQueue(name, { notify: listen, expireInSeconds: LEASE_S, retryLimit: 2, retryDelay: 0 });
        queues.add(name);
      };
      return {
        boss,
        queue,
        async enqueue(key, node = 'bench', options = {}) {
          await queue(node);
          return boss.send(node, { key }, options);
        },
        async bulk(n) {
          await queue('bench');
          for (let i = 0; i < n; i += 1000) {
            const jobs = Array.from({ length: Math.min(1000, n - i) }, (_, j) => ({ data: { key: `bulk-${i + j}` } }));
            await boss.insert('bench', jobs);
          }
        },
        // batch > 1 (the throughput phase): fetch 50 at once and fetch again at once while full,
        // pg-boss's own high-throughput mode, like baton's batch of 50.
        // backstopMs: the poll that still runs while NOTIFY is on (pg-boss default 30 s); a job
        // retried after expiry sends no NOTIFY, so only this poll finds it.
        async work({ onJob, node = 'bench', pollMs = POLL_MS, concurrency = 1, batch = 1, backstopMs = 30_000 }) {
          await queue(node);
          const id = await boss.work(
            node,
            {
              pollingIntervalSeconds: Math.max(0.5, pollMs / 1000),
              notifyPollingIntervalSeconds: Math.max(0.5, backstopMs / 1000),
              localConcurrency: concurrency,
              batchSize: batch,
              ...(batch > 1 ? { burstWhenBatchFull: true } : {}),
            },
            async (jobs) => {
              for (const job of jobs) await onJob(job.data.key, node);
            },
          );
          return { stop: () => boss.offWork(node, { id }) };
        },
        close: async () => {
          await boss.stop({ graceful: false, timeout: 2000 });
          if (pglite) await pglite.close();
        },
      };
    },
  },

  graphile: {
    async open(url) {
      if (url === 'pglite')
        throw new Error('graphile-worker takes only a connectionString or a pg.Pool (no adapter for PGlite)');
      const { run, makeWorkerUtils } = await import('graphile-worker');
      const utils = await makeWorkerUtils({ connectionString: url, logger: quietGw });
      await utils.migrate();
      const runners = [];
      return {
        utils,
        async enqueue(key, node = 'bench') {
          await utils.addJob(node, { key });
        },
        async bulk(n) {
          await utils.withPgClient((c) =>
            c.query(
              `select graphile_worker.add_job('bench', json_build_object('key', 'bulk-' || g)) from generate_series(1, $1::int) g`,
              [n],
            ),
          );
        },
        async work({ onJob, node = 'bench', pollMs = POLL_MS, concurrency = 1 }) {
          const runner = await run({
            connectionString: url,
            concurrency,
            pollInterval: pollMs,
            logger: quietGw,
            noHandleSignals: true,
            // The sweep that frees locks older than 4 h runs every 8-10 min by default; every 1-2 s here.
            preset: { worker: { minResetLockedInterval: 1000, maxResetLockedInterval: 2000 } },
            taskList: {
              [node]: async (payload) => {
                await onJob(payload.key, node);
              },
            },
          });
          runners.push(runner);
          return { stop: () => runner.stop() };
        },
        close: async () => {
          await utils.release();
        },
      };
    },
  },
};

// ---------------------------------------------------------------- child (kill -9 target)

if (process.argv[2] === '--child') {
  const [, , , name, url] = process.argv;
  const engine = await engines[name].open(url, { supervise: false });
  const onJob = async (key) => {
    process.stdout.write(`START ${key}\n`);
    await new Promise(() => {}); // mid-job forever, until kill -9
  };
  if (name === 'baton') engine.work({ onJob, pollMs: 100, leaseMs: LEASE_S * 1000, batch: 1 });
  else await engine.work({ onJob, pollMs: 500 });
  process.stdout.write('READY\n');
  await new Promise(() => {});
}

// ---------------------------------------------------------------- phases

async function latency(engine, label, workOpts, samplesWanted = LATENCY_SAMPLES) {
  const seen = new Map();
  const w = await engine.work({
    onJob: async (key) => {
      if (!seen.has(key)) seen.set(key, performance.now());
    },
    ...workOpts,
  });
  await sleep(1500); // let the worker reach its idle wait (LISTEN or poll sleep)
  const samples = [];
  for (let i = 0; i < samplesWanted; i++) {
    const key = `lat-${label}-${i}`;
    await sleep(Math.random() * POLL_MS); // land at a uniformly random point of the poll cycle
    const t0 = performance.now();
    await engine.enqueue(key);
    if (!(await waitFor(() => seen.has(key), 10_000, 2))) {
      samples.push(NaN);
      continue;
    }
    samples.push(seen.get(key) - t0);
  }
  await w.stop();
  const ok = samples.filter(Number.isFinite);
  return { p50: pct(ok, 50), p95: pct(ok, 95), samples: ok.length, lost: samples.length - ok.length };
}

async function throughput(engine, workOpts) {
  const counts = new Map();
  const onJob = async (key) => {
    counts.set(key, (counts.get(key) ?? 0) + 1);
  };
  const te = performance.now();
  await engine.bulk(THROUGHPUT_JOBS);
  const enqueueMs = performance.now() - te;
  const t0 = performance.now();
  const workers = [];
  if (workOpts.separate) for (let i = 0; i < WORKERS; i++) workers.push(engine.work({ onJob, pollMs: 200 }));
  else workers.push(engine.work({ onJob, pollMs: 200, concurrency: WORKERS, batch: workOpts.batch ?? 1 }));
  const started = await Promise.all(workers);
  const finished = await waitFor(() => counts.size >= THROUGHPUT_JOBS, 90_000, 20);
  const elapsed = performance.now() - t0;
  await Promise.all(started.map((w) => w.stop()));
  const dup = [...counts.values()].filter((c) => c > 1).length;
  return {
    jobs: counts.size,
    finished,
    seconds: elapsed / 1000,
    perSecond: counts.size / (elapsed / 1000),
    duplicates: dup,
    enqueueSeconds: enqueueMs / 1000,
  };
}

async function killNine(name, url, engine, { observeMs, afterObserve } = {}) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--child', name, url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  if (!(await waitFor(() => out.includes('READY'), 30_000))) {
    child.kill('SIGKILL');
    return { error: 'child never ready' };
  }
  await engine.enqueue('kill-job');
  if (!(await waitFor(() => out.includes('START kill-job'), 30_000))) {
    child.kill('SIGKILL');
    return { error: 'child never started the job' };
  }
  child.kill('SIGKILL');
  const killedAt = performance.now();
  await new Promise((r) => child.once('exit', r));
  const runs = [];
  const w = await engine.work({
    onJob: async (key) => {
      if (key === 'kill-job') runs.push(performance.now() - killedAt);
    },
    pollMs: 500,
    leaseMs: LEASE_S * 1000,
    backstopMs: 1000,
  });
  await sleep(observeMs);
  let afterRuns = [];
  if (afterObserve) {
    const mark = runs.length;
    await afterObserve();
    await waitFor(() => runs.length > mark, 15_000);
    await sleep(3000);
    afterRuns = runs.slice(mark);
  }
  await w.stop();
  return {
    reRunAfterSeconds: runs.length ? runs[0] / 1000 : null,
    runsInWindow: runs.length - afterRuns.length,
    windowSeconds: observeMs / 1000,
    afterSimulatedExpiry: afterObserve ? afterRuns.length : undefined,
  };
}

async function routing(engine, name) {
  const seen = [];
  // batch 10: a pg-boss worker with batchSize 1 waits a polling interval after every job.
  const wa = await engine.work({
    node: 'launch-node-a',
    onJob: async (key, node) => seen.push([key, node]),
    pollMs: 500,
    batch: 10,
  });
  const wb = await engine.work({
    node: 'launch-node-b',
    onJob: async (key, node) => seen.push([key, node]),
    pollMs: 500,
    batch: 10,
  });
  const n = 100;
  for (let i = 0; i < n; i++)
    await engine.enqueue(
      `route-${i}-${i % 2 ? 'launch-node-b' : 'launch-node-a'}`,
      i % 2 ? 'launch-node-b' : 'launch-node-a',
    );
  const extra = {};
  if (name === 'graphile') {
    // Transactional enqueue from SQL: a job added in a rolled-back transaction must never run.
    await engine.utils.withPgClient(async (c) => {
      await c.query('begin');
      await c.query(
        `select graphile_worker.add_job('launch-node-a', json_build_object('key', 'route-rolledback-launch-node-a'))`,
      );
      await c.query('rollback');
      await c.query('begin');
      await c.query(
        `select graphile_worker.add_job('launch-node-b', json_build_object('key', 'route-sql-launch-node-b'))`,
      );
      await c.query('commit');
    });
  }
  if (name === 'pgboss') {
    // singletonKey dedupes only on a queue with a policy that says so ('short': one queued job per key).
    await engine.boss.createQueue('singleton', { policy: 'short' });
    const a = await engine.boss.send('singleton', { key: 'x' }, { singletonKey: 'update-42' });
    const b = await engine.boss.send('singleton', { key: 'x' }, { singletonKey: 'update-42' });
    await engine.queue('plain-singleton');
    const c = await engine.boss.send('plain-singleton', { key: 'x' }, { singletonKey: 'update-42' });
    const d = await engine.boss.send('plain-singleton', { key: 'x' }, { singletonKey: 'update-42' });
    extra.singletonOnStandardQueue = c && d ? 'both accepted' : 'second refused';
    extra.singletonSecondSend = b === null ? 'refused (null)' : 'accepted';
    extra.singletonFirstSend = a ? 'accepted' : 'refused';
  }
  const expected = n + (name === 'graphile' ? 1 : 0);
  await waitFor(() => seen.length >= expected, 30_000);
  await sleep(1000);
  await wa.stop();
  await wb.stop();
  const misrouted = seen.filter(([key, node]) => !key.endsWith(node)).length;
  return {
    delivered: seen.length,
    expected,
    misrouted,
    rolledBackRan: seen.filter(([k]) => k.includes('rolledback')).length,
    ...extra,
  };
}

async function pgliteTry(name) {
  try {
    const engine = await engines[name].open('pglite');
    try {
      const r = await latency(engine, `${name}-pglite`, { pollMs: POLL_MS }, 10);
      return { works: r.samples > 0, p50: r.p50, p95: r.p95 };
    } finally {
      await engine.close();
    }
  } catch (err) {
    return { works: false, error: err instanceof Error ? err.message : String(err) };
  }
}

/** Packages pulled in by `name` (transitively, from package-lock.json) and their size on disk. */
function weight(name) {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  const pkgs = lock.packages;
  const closure = (start) => {
    const seen = new Set();
    const stack = [start];
    while (stack.length) {
      const p = stack.pop();
      if (seen.has(p) || !pkgs[p]) continue;
      seen.add(p);
      const deps = { ...pkgs[p].dependencies, ...pkgs[p].optionalDependencies };
      for (const d of Object.keys(deps)) {
        // node resolution: nearest node_modules up from p
        let base = p;
        let found;
        for (;;) {
          const cand = `${base}/node_modules/${d}`;
          if (pkgs[cand]) {
            found = cand;
            break;
          }
          const i = base.lastIndexOf('/node_modules/');
          if (i < 0) {
            if (pkgs[`node_modules/${d}`]) found = `node_modules/${d}`;
            break;
          }
          base = base.slice(0, i);
        }
        if (found) stack.push(found);
      }
    }
    return seen;
  };
  const mine = closure(`node_modules/${name}`);
  const batonProd = new Set();
  for (const d of Object.keys(lock.packages[''].dependencies ?? {}))
    for (const p of closure(`node_modules/${d}`)) batonProd.add(p);
  const du = (dir) => {
    let total = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory() && e.name !== 'node_modules') total += du(p);
      else if (e.isFile()) total += lstatSync(p).size;
    }
    return total;
  };
  let bytes = 0;
  let newBytes = 0;
  let fresh = 0;
  for (const p of mine) {
    let b = 0;
    try {
      b = du(join(ROOT, p));
    } catch {
      /* optional dependency not installed here */
    }
    bytes += b;
    if (!batonProd.has(p)) {
      fresh++;
      newBytes += b;
    }
  }
  return { packages: mine.size, newToBaton: fresh, mib: bytes / 2 ** 20, newMib: newBytes / 2 ** 20 };
}

// ---------------------------------------------------------------- main

const base = process.env.DATABASE_URL;
if (!base) {
  console.error(
    'queue-engines: set DATABASE_URL to a PostgreSQL server on 127.0.0.1 (the bench creates and drops its own databases).',
  );
  process.exit(2);
}
if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(base).hostname)) {
  console.error(
    'queue-engines: DATABASE_URL must point at a loopback server (127.0.0.1): the bench creates and drops databases.',
  );
  process.exit(2);
}
const benchStart = performance.now();
const result = { loadStart: loadavg().map((v) => +v.toFixed(2)), engines: {} };
const adm = await admin(base);
const dbs = {};
try {
  for (const name of Object.keys(engines)) {
    const db = `baton_qbench_${name}_${process.pid}`;
    await adm.unsafe(`drop database if exists ${db}`);
    await adm.unsafe(`create database ${db}`);
    dbs[name] = urlFor(base, db);
  }
  for (const name of Object.keys(engines)) {
    const url = dbs[name];
    const r = (result.engines[name] = {});
    const t0 = performance.now();
    console.error(`[${name}] latency…`);
    const engine = await engines[name].open(url);
    try {
      if (name === 'baton') r.latencyPoll = await latency(engine, 'poll', { pollMs: POLL_MS });
      if (name === 'pgboss') {
        r.latencyListen = await latency(engine, 'listen', { pollMs: 30_000 });
        const polling = await engines.pgboss.open(url, { listen: false });
        try {
          r.latencyPoll = await latency(polling, 'poll', { pollMs: POLL_MS });
        } finally {
          await polling.close();
        }
      }
      if (name === 'graphile') {
        r.latencyListen = await latency(engine, 'listen', { pollMs: 30_000 });
        r.latencyPoll = { note: 'LISTEN is always on; polling (default 2 s) is only the fallback' };
      }
      console.error(`[${name}] throughput…`, JSON.stringify(r));
      r.throughput = await throughput(engine, { separate: name === 'baton', batch: name === 'pgboss' ? 50 : 1 });
      console.error(`[${name}] kill -9…`, JSON.stringify(r.throughput));
      if (name === 'graphile') {
        r.kill9 = await killNine(name, url, engine, {
          observeMs: 15_000,
          // get_job treats a lock as expired after a hard-coded 4 hours: simulate that by ageing it.
          afterObserve: () =>
            engine.utils.withPgClient(async (c) => {
              await c.query(
                `update graphile_worker._private_jobs set locked_at = now() - interval '4 hours 1 minute' where locked_at is not null`,
              );
              await c
                .query(
                  `update graphile_worker._private_job_queues set locked_at = now() - interval '4 hours 1 minute' where locked_at is not null`,
                )
                .catch(() => {});
            }),
        });
      } else {
        r.kill9 = await killNine(name, url, engine, { observeMs: (LEASE_S + 8) * 1000 });
      }
      if (name !== 'baton') {
        console.error(`[${name}] routing…`);
        r.routing = await routing(engine, name);
      } else {
        r.routing = { note: 'no node column or per-node claim yet' };
      }
    } finally {
      await engine.close();
    }
    console.error(`[${name}] pglite…`);
    r.pglite = await pgliteTry(name);
    r.weight =
      name === 'baton' ? { note: 'no extra dependency' } : weight(name === 'pgboss' ? 'pg-boss' : 'graphile-worker');
    r.phaseSeconds = (performance.now() - t0) / 1000;
    console.error(JSON.stringify({ [name]: r }));
  }
} finally {
  for (const db of Object.values(dbs))
    await adm
      .unsafe(`drop database if exists ${new URL(db).pathname.slice(1)} with (force)`)
      .catch((e) => console.error(e.message));
  await adm.end();
}
result.loadEnd = loadavg().map((v) => +v.toFixed(2));
result.totalSeconds = (performance.now() - benchStart) / 1000;

const e = result.engines;
const row = (label, f) =>
  `| ${label} | ${['baton', 'pgboss', 'graphile'].map((n) => (e[n] ? f(e[n]) : 'n/a')).join(' | ')} |`;
const lat = (l) => (l && Number.isFinite(l.p50) ? `p50 ${ms(l.p50)}, p95 ${ms(l.p95)}` : (l?.note ?? 'n/a'));
console.log('| measure | baton outbox | pg-boss | graphile-worker |');
console.log('|---|---|---|---|');
console.log(row(`enqueue→claim, idle worker, polling every ${POLL_MS} ms`, (r) => lat(r.latencyPoll)));
console.log(
  row('enqueue→claim, idle worker, LISTEN/NOTIFY', (r) => (r.latencyListen ? lat(r.latencyListen) : 'no LISTEN')),
);
console.log(
  row(
    `${THROUGHPUT_JOBS} jobs, ${WORKERS} workers`,
    (r) =>
      `${r.throughput.perSecond.toFixed(0)} jobs/s, ${r.throughput.duplicates} run twice${r.throughput.finished ? '' : ' (timed out)'}`,
  ),
);
const kill = (k) => {
  if (k.error) return k.error;
  const first =
    k.runsInWindow > 0
      ? `re-run after ${k.reRunAfterSeconds.toFixed(1)} s, ${k.runsInWindow}× in ${k.windowSeconds} s`
      : `not re-run in ${k.windowSeconds} s`;
  return k.afterSimulatedExpiry === undefined
    ? first
    : `${first}; ${k.afterSimulatedExpiry}× once its lock is aged past 4 h`;
};
console.log(row(`kill -9 mid-job (lease/expiry ${LEASE_S} s)`, (r) => kill(r.kill9)));
console.log(
  row(
    'route 100 jobs to 2 named nodes',
    (r) => r.routing.note ?? `${r.routing.delivered}/${r.routing.expected}, ${r.routing.misrouted} misrouted`,
  ),
);
console.log(
  row('embedded PGlite', (r) =>
    r.pglite.works ? `yes (p50 ${ms(r.pglite.p50)})` : `no: ${r.pglite.error ?? 'nothing claimed'}`,
  ),
);
console.log(
  row(
    'dependency weight',
    (r) =>
      r.weight.note ??
      `${r.weight.packages} packages (${r.weight.newToBaton} new), ${r.weight.mib.toFixed(1)} MiB (${r.weight.newMib.toFixed(1)} new)`,
  ),
);
console.log(
  `\nload average start ${result.loadStart.join(' ')}, end ${result.loadEnd.join(' ')}; ${result.totalSeconds.toFixed(0)} s in all`,
);
console.log(JSON.stringify(result, null, 1));
process.exit(0);
