/**
 * The default database with `DATABASE_URL` unset (README "Embedded database"): embedded
 * PostgreSQL for a normal user, PGlite with one banner line saying why for root. PostgreSQL
 * refuses root, and the suite runs as root in CI: the service then runs as a normal user through
 * runuser(1) (`BATON_TEST_USER`, default `nobody`), from this checkout (which that user must be
 * able to read, as a clone under /tmp is).
 */
import { execa } from 'execa';
import { chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI } from '../support/cli.js';

const isRoot = process.getuid?.() === 0;
const USER = process.env.BATON_TEST_USER ?? 'nobody';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Home {
  dir: string;
  batonHome: string;
  env: Record<string, string>;
  /** The command line that runs `baton ARGS` as the test user, and the environment to spawn it with. */
  argv(args: readonly string[]): [string, string[], Record<string, string>];
}

async function makeHome(asUser: boolean): Promise<Home> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-epg-'));
  const batonHome = join(dir, '.baton');
  await mkdir(batonHome);
  const env = { HOME: dir, PATH: '/usr/local/bin:/usr/bin:/bin', BATON_HOME: batonHome, BATON_LOG_LEVEL: 'warn' };
  let uid: number | undefined;
  if (asUser && isRoot) {
    uid = Number((await execa('id', ['-u', USER])).stdout);
    const gid = Number((await execa('id', ['-g', USER])).stdout);
    for (const path of [dir, batonHome]) await chown(path, uid, gid);
  }
  const home: Home = {
    dir,
    batonHome,
    env,
    argv: (args) =>
      uid !== undefined
        ? // runuser lives in sbin, often not on the PATH baton gets; `env -i` then sets exactly baton's environment.
          [
            'runuser',
            [
              '-u',
              USER,
              '--',
              'env',
              '-i',
              ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
              process.execPath,
              CLI,
              ...args,
            ],
            { PATH: `${env.PATH}:/usr/sbin:/sbin` },
          ]
        : [process.execPath, [CLI, ...args], env],
  };
  cleanups.push(async () => {
    await stopLeftoverPostmaster(batonHome);
    await rm(dir, { recursive: true, force: true });
  });
  return home;
}

function baton(home: Home, args: readonly string[]) {
  const [file, argv, env] = home.argv(args);
  return execa(file, argv, { env, extendEnv: false, reject: false, stdin: 'ignore', cwd: home.dir, timeout: 120_000 });
}

/** `baton start`, resolved at `baton ready`; `pid` is the node process (not runuser). */
async function startService(
  home: Home,
): Promise<{ child: Promise<unknown>; out: () => string; pid: () => Promise<number> }> {
  const [file, argv, env] = home.argv(['start']);
  const child = execa(file, argv, {
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    cwd: home.dir,
    buffer: false,
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(await nodePid(child.pid!), 'SIGKILL');
      await child;
    }
  });
  await new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (out.includes('baton ready')) resolve();
    };
    child.stdout?.on('data', check);
    void child.then(() => reject(new Error(`baton start exited before ready:\n${out}`)));
  });
  return { child, out: () => out, pid: () => nodePid(child.pid!) };
}

/** The node process at or under `pid` (runuser forks it). */
async function nodePid(pid: number): Promise<number> {
  // By its program, not /proc/<pid>/comm: Node 24 names its main thread "MainThread".
  const argv0 = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0')[0];
  if (argv0 === process.execPath) return pid;
  const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => ''))
    .trim()
    .split(/\s+/)
    .filter(Boolean);
  for (const child of children) {
    const found = await nodePid(Number(child)).catch(() => undefined);
    if (found) return found;
  }
  throw new Error(`no node process under ${pid}`);
}

async function postmaster(batonHome: string): Promise<number | undefined> {
  const text = await readFile(join(batonHome, 'postgres', 'postmaster.pid'), 'utf8').catch(() => undefined);
  const pid = Number(text?.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 && (await running(pid)) ? pid : undefined;
}

/** Alive and not a zombie (a container's pid 1 may be slow to reap a reparented server). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

async function stopLeftoverPostmaster(batonHome: string): Promise<void> {
  const pid = await postmaster(batonHome);
  if (pid) process.kill(pid, 'SIGQUIT');
}

describe('the embedded database with DATABASE_URL unset', () => {
  it('is PostgreSQL on a unix socket for a normal user, shared by the CLI commands, stopped with the service, and survives a crash and a stale postmaster.pid', async () => {
    const home = await makeHome(true);
    const pgDir = join(home.batonHome, 'postgres');
    // Looking creates nothing: runs and doctor on an empty home leave no database behind.
    expect((await baton(home, ['runs'])).stdout).toMatch(/No coding runs yet/);
    const emptyDoctor = await baton(home, ['doctor', '--json']);
    expect(JSON.stringify(JSON.parse(emptyDoctor.stdout))).toContain('"engine":"embedded-postgres"');
    expect(await readFile(join(pgDir, 'PG_VERSION'), 'utf8').catch(() => 'absent')).toBe('absent');

    const first = await startService(home);
    expect(first.out()).toContain(`database: embedded PostgreSQL in ${pgDir} (unix socket only)`);
    const conf = await readFile(join(pgDir, 'baton.conf'), 'utf8');
    expect(conf).toMatch(/^listen_addresses = ''$/m);

    // Beside the running service: doctor opens the same database directly (a second process).
    const doctor = await baton(home, ['doctor', '--json']);
    const database = (
      JSON.parse(doctor.stdout) as { rows: { area: string; status: string; facts: Record<string, unknown> }[] }
    ).rows.find((r) => r.area === 'database');
    expect(database?.facts).toMatchObject({
      engine: 'embedded-postgres',
      location: pgDir,
      migrationsCurrent: true,
      error: null,
    });
    const runs = await baton(home, ['runs']);
    expect(runs.exitCode).toBe(0);
    expect(runs.stdout).toMatch(/No coding runs/);
    const cancel = await baton(home, ['cancel', 'hr_000000000000']);
    expect(cancel.stdout).toMatch(/No coding run found/);

    // `baton ask` opens the database itself beside the service (here refused: not approved) and,
    // closing, leaves the server running for the service, which is still connected.
    const serverBefore = await postmaster(home.batonHome);
    expect(serverBefore).toBeDefined();
    const ask = await baton(home, ['ask', 'say hi']);
    expect(ask.stdout).toMatch(/not yet approved/);
    expect(ask.exitCode).toBe(2);
    expect(await postmaster(home.batonHome)).toBe(serverBefore);
    expect((await baton(home, ['runs'])).exitCode).toBe(0);
    // …and leaves the service's service.json (its health port and admin token) alone: doctor and
    // the approval servers find the service through it (fresh-eyes pass: ask replaced, then removed it).
    const state = JSON.parse(await readFile(join(home.batonHome, 'service.json'), 'utf8')) as { pid: number };
    expect(state.pid).toBe(await first.pid());

    // A crash (SIGKILL) leaves the server running: the next start uses it.
    process.kill(await first.pid(), 'SIGKILL');
    await first.child;
    expect(await postmaster(home.batonHome)).toBe(serverBefore);
    const second = await startService(home);
    expect(second.out()).toContain('embedded PostgreSQL');

    // `baton stop` answers through the service; SIGTERM stops the service and its server.
    const stop = await baton(home, ['stop']);
    expect(stop.exitCode).toBe(0);
    process.kill(await second.pid(), 'SIGTERM');
    await second.child;
    expect(await postmaster(home.batonHome)).toBeUndefined();

    // A postmaster.pid left by a crash before a reboot names a pid now held by another program
    // of the same user (here: a sleep). PostgreSQL alone refuses to start then.
    const ids = isRoot
      ? { uid: Number((await execa('id', ['-u', USER])).stdout), gid: Number((await execa('id', ['-g', USER])).stdout) }
      : {};
    const sleeper = execa('sleep', ['600'], { reject: false, ...ids });
    cleanups.push(async () => {
      sleeper.kill('SIGKILL');
      await sleeper;
    });
    const sleepPid = sleeper.pid!;
    await writeFile(join(pgDir, 'postmaster.pid'), `${sleepPid}\n${pgDir}\n`);
    expect(await running(sleepPid)).toBe(true);
    if (isRoot) await execa('chown', [USER, join(pgDir, 'postmaster.pid')]);
    const third = await startService(home);
    expect(third.out()).toContain('embedded PostgreSQL');
    process.kill(await third.pid(), 'SIGTERM');
    await third.child;
    expect(await postmaster(home.batonHome)).toBeUndefined();
  }, 240_000);

  it.runIf(isRoot)(
    'is PostgreSQL as root too, its server run by the unprivileged account baton-postgres that owns the data directory',
    async () => {
      const home = await makeHome(false);
      const pgDir = join(home.batonHome, 'postgres');
      const service = await startService(home);
      expect(service.out()).toContain(`database: embedded PostgreSQL in ${pgDir} (unix socket only)`);
      expect(service.out()).not.toMatch(/PGlite/);
      const server = await postmaster(home.batonHome);
      expect(server).toBeDefined();
      const account = {
        uid: Number((await execa('id', ['-u', 'baton-postgres'])).stdout),
        gid: Number((await execa('id', ['-g', 'baton-postgres'])).stdout),
      };
      const owner = async (path: string) => {
        const s = await stat(path);
        return { uid: s.uid, gid: s.gid };
      };
      expect(await owner(pgDir)).toEqual(account);
      expect(await owner(join(pgDir, 'baton.conf'))).toEqual(account);
      const status = await readFile(`/proc/${server!}/status`, 'utf8');
      expect(status).toMatch(new RegExp(`^Uid:\\s+${account.uid}\\s`, 'm'));
      // The CLI commands beside it open the same server as root.
      expect((await baton(home, ['runs'])).stdout).toMatch(/No coding runs/);
      const doctor = JSON.parse((await baton(home, ['doctor', '--json'])).stdout) as {
        rows: { area: string; facts: Record<string, unknown> }[];
      };
      expect(doctor.rows.find((r) => r.area === 'database')?.facts).toMatchObject({
        engine: 'embedded-postgres',
        location: pgDir,
        error: null,
      });
      // A restart uses the same data; SIGTERM stops the server with the service.
      process.kill(await service.pid(), 'SIGTERM');
      await service.child;
      expect(await postmaster(home.batonHome)).toBeUndefined();
      const again = await startService(home);
      expect(again.out()).toContain('embedded PostgreSQL');
      process.kill(await again.pid(), 'SIGTERM');
      await again.child;
      expect(await postmaster(home.batonHome)).toBeUndefined();
    },
    240_000,
  );
});
