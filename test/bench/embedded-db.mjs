// Side by side, the embedded-database candidates of issue 12 (README "Embedded database"): the
// baton service with DATABASE_URL unset on
//   pglite       embedded PGlite (forced by an empty $BATON_HOME/pgdata, as a home from before)
//   embedded-pg  embedded PostgreSQL (the default for a non-root user; src/store/embedded-postgres.ts)
//   external     a baseline: DATABASE_URL to the PostgreSQL server at BENCH_PG (default
//                postgres://postgres@127.0.0.1:5432), a fresh database per run; the server's
//                memory is not counted, so this is baton's own start and memory
// For each of RUNS fresh homes: time from spawn to "baton ready" on the fresh home (first start)
// and again on the same home (restart); memory as PSS (proportional set size, /proc/<pid>/
// smaps_rollup: a page shared by n processes counts 1/n in each, so the sum over processes is
// what they cost together), summed over the baton process and every PostgreSQL process, after
// IDLE_MS idle, and the peak over that time; the processes left after the service stopped.
//
//   npm run build
//   node test/bench/embedded-db.mjs pglite|embedded-pg [RUNS]
//
// Run as root: the service then runs as BENCH_USER (default nobody, which must be able to read
// this checkout) through runuser(1), since PostgreSQL refuses root, and root may read every
// smaps_rollup. After the idle window of each first start, `baton runs` and `baton doctor` run
// beside the service as the same user (their exit codes are reported: the issue asks that the
// commands work while the service runs). Prints one JSON line per start and a summary (ranges and
// medians) with the load average before and after; the bench scenario
// test/bench/embedded-db.bench.ts runs this script for both candidates.
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

const BATON = fileURLToPath(new URL('../../dist/cli/baton.js', import.meta.url));
const engine = process.argv[2];
const RUNS = Number(process.argv[3] ?? 3);
const IDLE_MS = Number(process.env.IDLE_MS ?? 10000);
const USER = process.env.BENCH_USER ?? 'nobody';
if (!['pglite', 'embedded-pg', 'external'].includes(engine))
  throw new Error('usage: embedded-db.mjs pglite|embedded-pg|external [RUNS]');
const asRoot = process.getuid() === 0;
const ids = asRoot
  ? {
      uid: Number(execFileSync('id', ['-u', USER]).toString()),
      gid: Number(execFileSync('id', ['-g', USER]).toString()),
    }
  : undefined;

function pssKb(pid) {
  try {
    const m = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}
function comm(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
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
/** Every node/postgres process under the roots (runuser itself is not baton's cost). */
function tree(roots) {
  const kids = children();
  const seen = new Set();
  const stack = [...roots];
  const pids = [];
  while (stack.length) {
    const p = stack.pop();
    if (seen.has(p)) continue;
    seen.add(p);
    // Node 24 names its main thread "MainThread" (/proc/<pid>/comm).
    if (/^(node|MainThread|postgres|postmaster)$/.test(comm(p))) pids.push(p);
    stack.push(...(kids.get(p) ?? []));
  }
  return pids;
}
function postmasterPid(home) {
  const file = join(home, 'postgres', 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return comm(pid) ? pid : undefined;
}
function measure(root, home) {
  const pm = postmasterPid(home);
  const pids = tree(pm ? [root, pm] : [root]);
  const kb = pids.reduce((sum, p) => sum + pssKb(p), 0);
  const pgKb = pm ? tree([pm]).reduce((sum, p) => sum + pssKb(p), 0) : 0;
  return { mb: kb / 1024, pgMb: pgKb / 1024, procs: pids.length };
}

async function startBaton(env) {
  const t0 = performance.now();
  const argv = [process.execPath, BATON, 'start'];
  const child = asRoot
    ? spawn('runuser', ['-u', USER, '--', 'env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  await new Promise((resolve, reject) => {
    const check = () => {
      if (out.includes('baton ready')) resolve();
    };
    child.stdout.on('data', check);
    child.on('exit', (code) => reject(new Error(`baton exited ${code}: ${out}`)));
  });
  return { child, readyMs: performance.now() - t0, out };
}
/** Runs `baton <args>` as the service's user and environment; resolves to its exit code. */
function command(env, args) {
  const argv = [process.execPath, BATON, ...args];
  const child = asRoot
    ? spawn('runuser', ['-u', USER, '--', 'env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv], {
        stdio: ['ignore', 'pipe', 'pipe'],
      })
    : spawn(argv[0], argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (out += c));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      if (code !== 0) console.error(`baton ${args.join(' ')} exited ${code}: ${out.slice(-2000)}`);
      resolve(code);
    }),
  );
}
async function stop(child) {
  const node = asRoot ? tree([child.pid]).find((p) => comm(p) === 'node' || comm(p) === 'MainThread') : child.pid;
  process.kill(node, 'SIGTERM');
  await new Promise((r) => child.on('exit', r));
}
async function idle(root, home) {
  let peak = 0;
  const end = performance.now() + IDLE_MS;
  let last;
  while (performance.now() < end) {
    last = measure(root, home);
    peak = Math.max(peak, last.mb);
    await sleep(500);
  }
  return { ...last, peak };
}

const loadBefore = loadavg().map((l) => l.toFixed(2));
const rows = [];
for (let run = 0; run < RUNS; run++) {
  const dir = mkdtempSync(join(tmpdir(), `p12-${engine}-`));
  const home = join(dir, '.baton');
  mkdirSync(home, { recursive: true });
  if (engine === 'pglite') mkdirSync(join(home, 'pgdata'));
  if (ids)
    for (const p of [dir, home, ...(engine === 'pglite' ? [join(home, 'pgdata')] : [])]) chownSync(p, ids.uid, ids.gid);
  const env = {
    HOME: dir,
    PATH: process.env.PATH,
    USER: asRoot ? USER : (process.env.USER ?? 'x'),
    BATON_HOME: home,
    BATON_LOG_LEVEL: 'warn',
  };
  if (engine === 'external') {
    const server = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432';
    const name = `baton_bench_${process.pid}_${run}`;
    const { default: postgres } = await import('postgres');
    const admin = postgres(`${server}/postgres`, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    await admin.end();
    env.DATABASE_URL = `${server}/${name}`;
  }
  for (const phase of ['first start', 'restart']) {
    const { child, readyMs, out } = await startBaton(env);
    const db = /database: (.*)/.exec(out)?.[1] ?? '?';
    const mem = await idle(child.pid, home);
    const pm = postmasterPid(home);
    const beside =
      phase === 'first start'
        ? { runsExit: await command(env, ['runs']), doctorExit: await command(env, ['doctor']) }
        : {};
    await stop(child);
    await sleep(300);
    const left = pm && comm(pm) && comm(pm) !== '' && !readFileSync(`/proc/${pm}/stat`, 'utf8').includes(') Z') ? 1 : 0;
    const row = {
      engine,
      run,
      phase,
      readyMs: Math.round(readyMs),
      pssIdleMb: Math.round(mem.mb),
      pssPeakMb: Math.round(mem.peak),
      pgPssMb: Math.round(mem.pgMb),
      procs: mem.procs,
      postmasterLeft: left,
      ...beside,
      load1: loadavg()[0].toFixed(2),
      db: db.slice(0, 60),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
const pick = (phase, key) => rows.filter((r) => r.phase === phase).map((r) => r[key]);
const range = (xs) => `${Math.min(...xs)}–${Math.max(...xs)}`;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : Math.round((s[m - 1] + s[m]) / 2);
};
console.log(
  JSON.stringify({
    engine,
    runs: RUNS,
    loadBefore,
    loadAfter: loadavg().map((l) => l.toFixed(2)),
    firstStartMs: range(pick('first start', 'readyMs')),
    restartMs: range(pick('restart', 'readyMs')),
    pssIdleFirstMb: range(pick('first start', 'pssIdleMb')),
    pssIdleRestartMb: range(pick('restart', 'pssIdleMb')),
    medians: {
      firstStartMs: median(pick('first start', 'readyMs')),
      restartMs: median(pick('restart', 'readyMs')),
      pssIdleMb: median(rows.map((r) => r.pssIdleMb)),
    },
    besideFailures: rows.filter((r) => (r.runsExit ?? 0) !== 0 || (r.doctorExit ?? 0) !== 0).length,
    pssPeakMb: Math.max(...rows.map((r) => r.pssPeakMb)),
    procs: range(rows.map((r) => r.procs)),
    postmastersLeft: rows.reduce((s, r) => s + r.postmasterLeft, 0),
  }),
);
process.exit(0);
