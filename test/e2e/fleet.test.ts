/**
 * Several baton nodes on one PostgreSQL database (issue #16 items 1–2), through `baton start`
 * and the real grammY runner against the fake Bot API (which answers a second concurrent
 * `getUpdates` with 409 Conflict, as Telegram does): three nodes, each with its own BATON_HOME
 * and `[node] name`; exactly one polls the bot token, the others stand by; when the poller is
 * killed with SIGKILL a standby takes the lease and every update is answered once; a poller
 * outside the fleet makes the holder tell the owner once.
 */
import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/service.js';
import { OWNER, WAIT_MS, TOKEN, replyTarget, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.runIf(onPostgres)('a fleet of three nodes on one database', () => {
  let world: TelegramE2E;
  let sql: postgres.Sql;
  const others: ServiceProcess[] = [];

  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: '[node]\nname = "alpha"',
    });
    const config = await readFile(join(world.batonHome, 'config.toml'), 'utf8');
    for (const name of ['beta', 'gamma']) {
      const home = join(world.dir, `baton-home-${name}`);
      await mkdir(home, { recursive: true });
      await writeFile(join(home, 'config.toml'), config.replace('name = "alpha"', `name = "${name}"`));
      others.push(await startService({ ...world.env, BATON_HOME: home }));
    }
    sql = postgres(world.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  }, 240_000);

  afterAll(async () => {
    await sql?.end();
    for (const service of others) await service.stop();
    await world?.dispose();
  });

  const holder = async (): Promise<string | undefined> => {
    const rows = await sql<
      { node_name: string }[]
    >`select node_name from leases where key like 'telegram:%' and expires_at > now()`;
    return rows[0]?.node_name;
  };

  it('registers three nodes; one holds the token lease (never the token itself), two stand by', async () => {
    const nodes = await sql<{ name: string }[]>`select name from nodes order by name`;
    expect(nodes.map((n) => n.name)).toEqual(['alpha', 'beta', 'gamma']);
    // alpha started first, alone, so it took the lease.
    expect(await holder()).toBe('alpha');
    expect(world.service.stdout()).toContain('telegram: connected');
    for (const service of others) expect(service.stdout()).toMatch(/telegram: standby/);
    const keys = await sql<{ key: string }[]>`select key from leases`;
    for (const { key } of keys) expect(key).not.toContain(TOKEN.split(':')[1]!);
    // Only one poller: the fake Bot API never had to end a poll with 409.
    expect(world.telegram.calls.filter((c) => c.method === 'getUpdates' && c.status === 409)).toHaveLength(0);
  });

  it('a standby takes over when the poller is killed; every update is answered once', async () => {
    const { telegram } = world;
    const ids: number[] = [];
    let messageId = 5_000;
    const push = (count: number): void => {
      for (let i = 0; i < count; i++) {
        const id = messageId++;
        ids.push(id);
        telegram.pushUpdate(world.privateMessage(OWNER, '/whoami', id));
      }
    };
    push(10);
    await telegram.waitForSent((m) => replyTarget(m) === ids[9], WAIT_MS);
    const killedAt = Date.now();
    await world.service.kill();
    push(10);
    // A standby (beta or gamma) takes the lease once alpha's expires, then polls.
    let next: string | undefined;
    // Bounded, so a takeover that never comes fails here instead of polling past the test's end.
    for (let i = 0; i < 480 && (!next || next === 'alpha'); i++) {
      await new Promise((r) => setTimeout(r, 250));
      next = await holder();
    }
    const takeoverMs = Date.now() - killedAt;
    console.log(`fleet takeover after SIGKILL of the poller: ${takeoverMs} ms (lease ttl 10 s, tries every 2.5 s)`);
    expect(['beta', 'gamma']).toContain(next);
    for (const id of ids) await telegram.waitForSent((m) => replyTarget(m) === id, WAIT_MS);
    for (const id of ids) expect(telegram.sent.filter((m) => replyTarget(m) === id)).toHaveLength(1);
    // Generous for a loaded machine; the figure is printed above (issue #16 asks ≤ 15 s).
    expect(takeoverMs).toBeLessThan(60_000);
  }, 180_000);

  it('a poller outside the fleet: the holder tells the owner once, doctor shows the conflict', async () => {
    const { telegram } = world;
    const before = telegram.sent.filter(
      (m) => m.chat_id === OWNER && m.text.includes('outside the baton fleet'),
    ).length;
    // Another program polls the same token: each of its calls ends baton's pending poll with 409.
    const foreign = async (): Promise<void> => {
      await fetch(`${telegram.url}/bot${TOKEN}/getUpdates`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ timeout: 0 }),
      });
    };
    for (let i = 0; i < 3; i++) {
      await foreign();
      await new Promise((r) => setTimeout(r, 200));
    }
    const notice = await telegram.waitForSent(
      (m) => String(m.chat_id) === String(OWNER) && m.text.includes('outside the baton fleet'),
      WAIT_MS,
    );
    expect(notice.text).toContain('409');
    expect(
      telegram.sent.filter((m) => String(m.chat_id) === String(OWNER) && m.text.includes('outside the baton fleet'))
        .length,
    ).toBe(before + 1);
  }, 120_000);
});
