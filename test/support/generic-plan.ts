/**
 * The plan PostgreSQL gives a statement baton sends, as a cached generic plan of its prepared
 * statement: what the server may switch to after five executions when it looks no worse, and
 * always under `plan_cache_mode = force_generic_plan` (forced here). Used by the plan tests of
 * issue #15 to show a query keeps its index whatever the plan cache does.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import type { Db } from '../../src/store/database.js';
import * as schema from '../../src/store/schema.js';
import { openTestDatabase, type TestDatabase } from './database.js';

/** A statement as drizzle's logger saw it. */
export interface CapturedQuery {
  query: string;
  params: unknown[];
}

/** Index names and seq-scanned relations of a plan, and the plan itself (EXPLAIN FORMAT JSON). */
export interface PlanSummary {
  indexes: string[];
  seqScans: string[];
  plan: Record<string, unknown>;
}

/**
 * A fresh migrated PostgreSQL database (needs `DATABASE_URL`), a postgres.js `client` on it, and a
 * drizzle `db` over that client whose statements land in `captured`, for a RunStore whose queries
 * the test then explains. `close()` ends the client and drops the database.
 */
export async function openCapturingDatabase(): Promise<{
  database: TestDatabase;
  client: postgres.Sql;
  db: Db;
  captured: CapturedQuery[];
  close(): Promise<void>;
}> {
  const database = await openTestDatabase();
  const client = postgres(database.url!, { max: 2, onnotice: () => {} });
  const captured: CapturedQuery[] = [];
  const db = drizzle(client, {
    schema,
    logger: { logQuery: (query, params) => void captured.push({ query, params }) },
  }) as unknown as Db;
  return {
    database,
    client,
    db,
    captured,
    close: async () => {
      await client.end({ timeout: 5 });
      await database.dispose();
    },
  };
}

class Rollback extends Error {}

let prepared = 0;

/**
 * Prepares `captured` under a fresh name, forces the generic plan and explains it, inside a
 * transaction that is rolled back.
 *
 * @throws the server's error when the statement cannot be prepared or explained.
 */
export async function genericPlan(client: postgres.Sql, captured: CapturedQuery): Promise<PlanSummary> {
  const literal = (value: unknown): string =>
    typeof value === 'number'
      ? String(value)
      : `'${String(value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : value).replaceAll("'", "''")}'`;
  // PREPARE outlives the rolled-back transaction on its connection: one name per statement.
  const name = `generic_${(prepared += 1)}`;
  let plan: Record<string, unknown> | undefined;
  await client
    .begin(async (tx) => {
      await tx.unsafe(`prepare ${name} as ${captured.query}`);
      await tx.unsafe('set local plan_cache_mode = force_generic_plan');
      const execute =
        captured.params.length > 0 ? `execute ${name}(${captured.params.map(literal).join(', ')})` : `execute ${name}`;
      const out = await tx.unsafe(`explain (format json) ${execute}`);
      plan = ((out[0] as Record<string, unknown>)['QUERY PLAN'] as { Plan: Record<string, unknown> }[])[0]!.Plan;
      throw new Rollback();
    })
    .catch((err: unknown) => {
      if (!(err instanceof Rollback)) throw err;
    });
  const indexes: string[] = [];
  const seqScans: string[] = [];
  const walk = (node: Record<string, unknown>): void => {
    if (typeof node['Index Name'] === 'string') indexes.push(node['Index Name']);
    if (node['Node Type'] === 'Seq Scan') seqScans.push(String(node['Relation Name']));
    for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk(plan!);
  return { indexes, seqScans, plan: plan! };
}
