/**
 * The lock domain under a real race (PRODUCT.md §6 item 9): 20 launches into one worktree from
 * two separate processes on one PostgreSQL database → exactly one active run.
 */
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { createPostgresDatabase } from '../support/database.js';
import { openDatabase } from '../../src/store/database.js';

const LAUNCHER = fileURLToPath(new URL('../fakes/race-launcher.mjs', import.meta.url));
const adminUrl = process.env.DATABASE_URL;

// Two processes cannot share embedded PGlite (it is single-process by design), so this race
// needs a server. CI sets DATABASE_URL; .ci/run starts PostgreSQL.
describe.runIf(adminUrl)('lock race across two processes (postgres)', () => {
  let url: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const created = await createPostgresDatabase(adminUrl!);
    url = created.url;
    drop = created.drop;
    const migrated = await openDatabase({ url });
    await migrated.close();
  });
  afterAll(async () => drop?.());

  it('admits exactly max_active of 20 concurrent launches into distinct worktrees', async () => {
    const [a, b] = await Promise.all([
      execa(process.execPath, [LAUNCHER, url, '/race/many/*', '10', '3']),
      execa(process.execPath, [LAUNCHER, url, '/race/many/*', '10', '3']),
    ]);
    const results = [a, b].map((r) => JSON.parse(String(r.stdout)) as { won: number; refused: string[] });
    expect(results[0]!.won + results[1]!.won).toBe(3);
    expect([...results[0]!.refused, ...results[1]!.refused]).toEqual(Array(17).fill('max_active'));
    const sql = postgres(url, { max: 1 });
    try {
      const active = await sql`select count(*)::int as n from runs where status in ('starting', 'running')`;
      expect(active[0]!.n).toBe(3);
      await sql`update runs set status = 'completed', ended_at = now()`;
    } finally {
      await sql.end();
    }
  });

  it('lets exactly one of 20 concurrent launches into one worktree win', async () => {
    const [a, b] = await Promise.all([
      execa(process.execPath, [LAUNCHER, url, '/race/repo', '10']),
      execa(process.execPath, [LAUNCHER, url, '/race/repo', '10']),
    ]);
    const results = [a, b].map((r) => JSON.parse(String(r.stdout)) as { won: number; refused: string[] });
    expect(results[0]!.won + results[1]!.won).toBe(1);
    expect([...results[0]!.refused, ...results[1]!.refused]).toEqual(Array(19).fill('worktree_busy'));
    const sql = postgres(url, { max: 1 });
    try {
      const active = await sql`select count(*)::int as n from runs where status in ('starting', 'running')`;
      expect(active[0]!.n).toBe(1);
      const started =
        await sql`select count(*)::int as n from deliveries d join runs r on r.id = d.run_id where r.worktree_root = '/race/repo'`;
      expect(started[0]!.n).toBe(1);
    } finally {
      await sql.end();
    }
  });
});
