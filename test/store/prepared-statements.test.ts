/**
 * Every query baton sends through drizzle is prepared on the server (issue #15). Before, drizzle
 * asked postgres.js for unnamed statements, and postgres.js sends an unnamed statement that has
 * parameters in two turns (Parse + Describe, then Bind + Execute), holding the connection's
 * pipeline between them: two round trips and a fresh parse for every query of the launch and
 * delivery paths. Shown through a TCP proxy that counts what the client sends, and through the
 * server's own list of prepared statements. `?prepare=false` in the URL (a pooler in transaction
 * mode) still turns statements off.
 *
 * PostgreSQL server only (PGlite runs in the process: no connection, no turns); skipped on PGlite.
 */
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.js';
import { runs } from '../../src/store/schema.js';
import { testEngine } from '../support/database.js';
import { startProxiedPostgres, type ProxiedPostgres } from '../support/proxied-postgres.js';

describe.skipIf(testEngine !== 'postgres')('prepared statements on PostgreSQL', () => {
  let pg: ProxiedPostgres;
  beforeAll(async () => {
    pg = await startProxiedPostgres();
  }, 60_000);
  afterAll(async () => pg?.dispose());

  /** A query with parameters, as the launch path sends them. */
  const lookup = (database: Database, id: string) =>
    database.db
      .select({ id: runs.id })
      .from(runs)
      .where(and(eq(runs.id, id), eq(runs.status, 'running')));

  /** Client chunks (turns) that `n` runs of `lookup` cost, after one run to warm the connection. */
  async function turnsFor(database: Database, n: number, inTransaction: boolean): Promise<number> {
    const run = async (): Promise<void> => {
      if (inTransaction) {
        await database.db.transaction(async (tx) => {
          for (let i = 0; i < n; i++)
            await tx
              .select({ id: runs.id })
              .from(runs)
              .where(and(eq(runs.id, `r${i}`), eq(runs.status, 'running')));
        });
      } else {
        for (let i = 0; i < n; i++) await lookup(database, `r${i}`);
      }
    };
    await run();
    const before = pg.proxy.clientChunks;
    await run();
    return pg.proxy.clientChunks - before;
  }

  /** The statements the server has prepared on the pool's one connection. */
  async function preparedOnServer(database: Database): Promise<string[]> {
    const rows = (await database.db.execute(sql`select statement from pg_prepared_statements`)) as unknown as {
      statement: string;
    }[];
    return rows.map((r) => r.statement);
  }

  it('a repeated query with parameters is one round trip, prepared once per connection', async () => {
    const database = await pg.open();
    expect(await turnsFor(database, 10, false)).toBe(10);
    expect((await preparedOnServer(database)).some((s) => s.includes('from "runs"'))).toBe(true);
  });

  it('inside a transaction too (BEGIN and COMMIT are a turn each)', async () => {
    const database = await pg.open();
    expect(await turnsFor(database, 10, true)).toBe(12);
  });

  it('?prepare=false in the URL leaves statements unnamed (a pooler in transaction mode)', async () => {
    const database = await pg.open({ params: { prepare: 'false' } });
    expect(await turnsFor(database, 10, false)).toBe(20);
    expect(await preparedOnServer(database)).toEqual([]);
  });
});
