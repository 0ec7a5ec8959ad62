/**
 * Runs go to the node that holds the repository (issue #16 item 3), through three `baton start`
 * processes on one PostgreSQL database, each with its own BATON_HOME, `[node] name` and
 * `[workspace] roots` (three temp dirs standing in for three hosts). alpha polls Telegram; a
 * launch it receives for a directory under gamma's roots (by path, or by an alias naming the node)
 * is written for gamma, which resolves it, spawns the real codex CLI there and writes the run.
 * gamma's `max_active` counts gamma's runs only; a routed run still waiting can be cancelled; a
 * launch for a dead or unknown node is refused naming the node.
 */
import { access, mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RecordedRequest } from '../fakes/fake-openai.js';
import { startService, type ServiceProcess } from '../support/service.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
// dead_after well above the heartbeat: a node whose event loop stalls a few seconds on a loaded
// machine must not be taken for dead while it runs a routed run.
const DEAD_AFTER_S = 10;
const NODE = (name: string): string =>
  `max_active = 1\n[node]\nname = "${name}"\nheartbeat_seconds = 1\ndead_after_seconds = ${DEAD_AFTER_S}`;

describe.runIf(onPostgres)('routing a launch to the node that holds the repository', () => {
  let world: TelegramE2E;
  let sql: postgres.Sql;
  let beta: ServiceProcess;
  let gamma: ServiceProcess;
  let gammaHome: string;
  let gammaApp: string;
  let gammaLib: string;
  let messageId = 100;

  beforeAll(async () => {
    const gammaRootDir = (dir: string): string => join(dir, 'gamma-work');
    // alpha knows gamma's lib by an alias that names the node.
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: `${NODE('alpha')}\n[projects]\nx = "gamma:~/../gamma-work/lib"`,
    });
    const config = await readFile(join(world.batonHome, 'config.toml'), 'utf8');
    gammaApp = join(gammaRootDir(world.dir), 'app');
    gammaLib = join(gammaRootDir(world.dir), 'lib');
    for (const repo of [gammaApp, gammaLib, join(world.dir, 'beta-work')]) {
      await mkdir(repo, { recursive: true });
      await execa('git', ['init', '-q', repo]);
    }
    const nodeConfig = (name: string, root: string): string =>
      config
        .replace('name = "alpha"', `name = "${name}"`)
        .replace(/^roots = .*$/m, `roots = [${JSON.stringify(root)}]`)
        .replace(/^default = .*$/m, '')
        .replace(/^\[projects\]\nx = .*$/m, '');
    gammaHome = join(world.dir, 'baton-home-gamma');
    const betaHome = join(world.dir, 'baton-home-beta');
    for (const [home, name, root] of [
      [gammaHome, 'gamma', gammaRootDir(world.dir)],
      [betaHome, 'beta', join(world.dir, 'beta-work')],
    ] as const) {
      await mkdir(home, { recursive: true });
      await writeFile(join(home, 'config.toml'), nodeConfig(name, root));
    }
    gamma = await startService({ ...world.env, BATON_HOME: gammaHome });
    beta = await startService({ ...world.env, BATON_HOME: betaHome });
    sql = postgres(world.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    // "zq-blocker-task" runs long commands, one after the other (it holds gamma's only slot until cancelled); anything else answers at once.
    world.openai.setFallback((request: RecordedRequest) => {
      const body = JSON.stringify(request.body);
      return body.includes('zq-blocker-task')
        ? { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 600.5173', yield_time_ms: 30_000 } }
        : { kind: 'message', text: 'done' };
    });
  }, 240_000);

  afterAll(async () => {
    await sql?.end();
    await gamma?.stop();
    await beta?.stop();
    await world?.dispose();
  });

  async function answerTo(text: string): Promise<string> {
    const id = messageId++;
    world.telegram.pushUpdate(world.privateMessage(OWNER, text, id));
    return (await world.telegram.waitForSent((m) => replyTarget(m) === id, WAIT_MS)).text;
  }
  const sentStartingWith = (prefix: string) => world.telegram.waitForSent((m) => m.text.startsWith(prefix), WAIT_MS);
  const rowOf = async (runId: string) =>
    (
      await sql<
        { node: string; supervisor: string; cwd: string; status: string; launch: unknown }[]
      >`select node, supervisor, cwd, status, launch from runs where id = ${runId}`
    )[0]!;

  it('a launch alpha receives for a path under gamma’s roots runs on gamma, by path and by an alias naming the node', async () => {
    const sent = await answerTo(`/codex in:${gammaApp} routed by path`);
    const sentAt = Date.now();
    const runId = runIdOf(sent);
    expect(sent).toBe(
      `[run ${runId}] sent to node gamma · codex · gamma:${gammaApp}\nNode gamma starts it when it has a free slot; /cancel to drop it.`,
    );
    const started = await sentStartingWith(`[run ${runId}] started`);
    console.log(
      `routed run: "started" from gamma ${Date.now() - sentAt} ms after "sent to node gamma" (NOTIFY; the poll fallback runs every heartbeat)`,
    );
    expect(started.text).toBe(`[run ${runId}] started · codex · gamma:${gammaApp}`);
    const outcome = await sentStartingWith(`[run ${runId}] completed`);
    expect(outcome.text.split('\n')[0]).toContain(`codex · gamma:${gammaApp} ·`);
    const row = await rowOf(runId);
    expect(row).toMatchObject({
      node: 'gamma',
      supervisor: `${hostname()}:${gamma.pid}`,
      cwd: gammaApp,
      status: 'completed',
    });
    // gamma's CLI ran it: its events are spooled in gamma's home, and codex told the model its cwd.
    await access(join(gammaHome, 'harness', 'runs', runId, 'events.jsonl'));
    const request = world.openai.requests.find((r) => JSON.stringify(r.body).includes('routed by path'))!;
    expect(JSON.stringify(request.body)).toContain(gammaApp);

    const aliased = runIdOf(await answerTo('/codex in:x routed by alias'));
    await sentStartingWith(`[run ${aliased}] completed`);
    expect(await rowOf(aliased)).toMatchObject({
      node: 'gamma',
      supervisor: `${hostname()}:${gamma.pid}`,
      cwd: gammaLib,
      status: 'completed',
    });

    // The conversation default may be on another node too.
    expect(await answerTo('/use x')).toBe(
      'Runs in this conversation now default to gamma:~/../gamma-work/lib (on node gamma, which checks the directory at each launch).',
    );
    const byDefault = runIdOf(await answerTo('/codex routed by the default'));
    await sentStartingWith(`[run ${byDefault}] completed`);
    expect(await rowOf(byDefault)).toMatchObject({ node: 'gamma', cwd: gammaLib, status: 'completed' });
    await answerTo(`/use ${world.repo}`);
  }, 170_000);

  it('gamma’s max_active counts gamma’s runs; a routed run waiting for a slot can be cancelled', async () => {
    const blocker = runIdOf(await answerTo(`/codex in:${gammaApp} zq-blocker-task`));
    await sentStartingWith(`[run ${blocker}] started`);
    await world.openai.waitForRequest((r) => JSON.stringify(r.body).includes('zq-blocker-task'), WAIT_MS);
    const waiting = runIdOf(await answerTo('/codex in:x waits for the slot'));
    // gamma prepared it (resolved its directory), then left it queued: its one slot is taken.
    await waitFor(
      async () => {
        const row = await rowOf(waiting);
        return row.cwd === gammaLib && !JSON.stringify(row.launch).includes('"route"');
      },
      { timeoutMs: 90_000, what: 'gamma prepares the routed run', intervalMs: 200 },
    );
    expect((await rowOf(waiting)).status).toBe('queued');
    // alpha's max_active (also 1) does not count gamma's run: a run on alpha starts now.
    const local = runIdOf(await answerTo(`/codex in:${world.repo} local while gamma is full`));
    await sentStartingWith(`[run ${local}] completed`);
    expect((await rowOf(local)).node).toBe('alpha');
    expect((await rowOf(blocker)).status).toBe('running');
    expect((await rowOf(waiting)).status).toBe('queued');

    expect(await answerTo(`/cancel ${waiting}`)).toBe(`[run ${waiting}] cancelled (it was queued and never started).`);
    expect(await answerTo(`/cancel ${blocker}`)).toContain(`[run ${blocker}] cancel requested`);
    await sentStartingWith(`[run ${blocker}] cancelled`);
    expect(world.openai.requests.some((r) => JSON.stringify(r.body).includes('waits for the slot'))).toBe(false);
  }, 170_000);

  it('a directory gamma does not grant is refused by gamma with the reason', async () => {
    const runId = runIdOf(await answerTo('/codex in:gamma:/etc look around'));
    const outcome = await sentStartingWith(`[run ${runId}] failed`);
    expect(outcome.text).toContain('refused by node gamma');
    expect(outcome.text).toContain('Reason: outside_workspace');
  }, 120_000);

  it('a launch for an unknown node, or a node that died, is refused naming the node', async () => {
    expect(await answerTo('/codex in:nowhere:/srv/app zebra-hello')).toMatch(
      /^No node named nowhere is in this fleet now/,
    );
    expect(await answerTo('/use nowhere:/srv/app')).toMatch(/^No node named nowhere is in this fleet now/);
    await beta.kill();
    // Dead once silent past dead_after_seconds; a live node then forgets its row (item 4).
    await waitFor(
      async () =>
        (
          await sql`select 1 from nodes where name = 'beta' and heartbeat_at > now() - ${DEAD_AFTER_S}::int * interval '1 second'`
        ).length === 0,
      { timeoutMs: 90_000, what: 'beta is silent past dead_after', intervalMs: 200 },
    );
    const refusal = await answerTo(`/codex in:beta:${join(world.dir, 'beta-work')} zebra-hello`);
    expect(refusal).toMatch(/^(Node beta is not answering|No node named beta is in this fleet now)/);
    expect(world.openai.requests.some((r) => JSON.stringify(r.body).includes('zebra-hello'))).toBe(false);
  }, 120_000);
});
