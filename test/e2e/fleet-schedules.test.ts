/**
 * A schedule firing every minute on three `baton start` nodes sharing one PostgreSQL database,
 * with the real codex CLI against the fake model server and the real grammY runner against the
 * fake Bot API, while nodes are SIGKILLed and started again between slots, and once all three
 * at once: each slot is claimed by one node and launches one run, and its notice is sent once.
 * Real minutes pass (three slots), so the test takes about four minutes.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startService, type ServiceProcess } from '../support/service.js';
import { OWNER, WAIT_MS, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

const onPostgres = Boolean(process.env.DATABASE_URL);

describe.runIf(onPostgres)('a schedule on a fleet of three nodes', () => {
  let world: TelegramE2E;
  let sql: postgres.Sql;
  const homes: Record<string, string> = {};
  const others: Record<string, ServiceProcess> = {};

  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: '[node]\nname = "alpha"\nheartbeat_seconds = 1',
    });
    const config = await readFile(join(world.batonHome, 'config.toml'), 'utf8');
    for (const name of ['beta', 'gamma']) {
      homes[name] = join(world.dir, `baton-home-${name}`);
      await mkdir(homes[name], { recursive: true });
      await writeFile(join(homes[name], 'config.toml'), config.replace('name = "alpha"', `name = "${name}"`));
      others[name] = await startService({ ...world.env, BATON_HOME: homes[name] });
    }
    sql = postgres(world.env.DATABASE_URL!, { max: 1, onnotice: () => {} });
  }, 240_000);

  afterAll(async () => {
    await sql?.end();
    for (const service of Object.values(others)) await service.stop().catch(() => undefined);
    await world?.dispose();
  });

  interface Firing {
    slot_at: Date;
    node: string;
    status: string;
    run_id: string | null;
  }
  const firings = async (id: string): Promise<Firing[]> =>
    sql<
      Firing[]
    >`select slot_at, node, status, run_id from schedule_firings where schedule_id = ${id} order by slot_at`;

  /** Waits until `count` slots were launched and their runs ended. */
  const launched = async (id: string, count: number): Promise<Firing[]> => {
    for (let i = 0; i < 1_200; i++) {
      const rows = await firings(id);
      const runIds = rows.map((r) => r.run_id).filter((r): r is string => r !== null);
      const ended = await sql<{ n: number }[]>`
        select count(*)::int as n from runs where id = any(${runIds}) and status not in ('queued', 'starting', 'running')`;
      if (rows.length >= count && runIds.length >= count && ended[0]!.n >= count) return rows;
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`fewer than ${count} slots launched: ${JSON.stringify(await firings(id))}`);
  };

  /** SIGKILLs node `name` and starts it again. */
  const crash = async (name: string): Promise<void> => {
    if (name === 'alpha') return world.crashAndRestart();
    await others[name]!.kill();
    others[name] = await startService({ ...world.env, BATON_HOME: homes[name]! });
  };

  it('fires each minute once while nodes are killed and restarted', async () => {
    world.telegram.pushUpdate(
      world.privateMessage(OWNER, `/every minute name:tick /codex in:${world.repo} say hi`, 7_001),
    );
    const created = await world.telegram.waitForSent((m) => /^⏰ tick · s_[0-9a-f]{8} created/.test(m.text), WAIT_MS);
    const id = /(s_[0-9a-f]{8})/.exec(created.text)![1]!;

    const first = await launched(id, 1);
    // The node that fired the first slot crashes, and another with it.
    await crash(first[0]!.node);
    await crash(first[0]!.node === 'beta' ? 'gamma' : 'beta');
    await launched(id, 2);
    // Every node at once: the next slot fires once the first of them is back.
    await Promise.all([world.service.kill(), others.beta!.kill(), others.gamma!.kill()]);
    await Promise.all([crash('alpha'), crash('beta'), crash('gamma')]);
    await launched(id, 3);
    await sql`update schedules set state = 'paused' where id = ${id}`;
    // A slot claimed just before the pause ends its launch first.
    const rows = await launched(id, (await firings(id)).length);

    const slots = rows.map((r) => r.slot_at.getTime());
    // Whole minutes, one firing row each (the key), each with a run of its own.
    for (const slot of slots) expect(slot % 60_000).toBe(0);
    expect(rows.every((r) => r.status === 'launched')).toBe(true);
    const runIds = rows.map((r) => r.run_id);
    expect(new Set(runIds).size).toBe(rows.length);
    const runs = await sql<{ id: string }[]>`select id from runs where task = 'say hi'`;
    expect(runs.map((r) => r.id).sort()).toEqual([...runIds].sort());
    // One notice per slot, whichever node sent it.
    const notices = () => world.telegram.sent.filter((m) => m.text.startsWith(`⏰ tick · ${id} fires`));
    for (let i = 0; i < 240 && notices().length < rows.length; i++) await new Promise((r) => setTimeout(r, 250));
    expect(notices()).toHaveLength(rows.length);
    console.log(`schedule slots fired by: ${rows.map((r) => r.node).join(', ')}`);
  }, 420_000);
});
