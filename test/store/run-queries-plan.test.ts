/**
 * The launch transaction's read and a run end's queue check stay index lookups as the runs table
 * grows (issue #15). Both read the active and queued runs; before `runs_status` no index covered
 * `queued`, so each launch (under the launch lock) and each run's end scanned every run ever made:
 * 9 ms at 50,000 runs on the bench machine. Checked under a cached generic plan of the prepared
 * statement (forced here), which PostgreSQL may switch to after five executions.
 *
 * PostgreSQL server only (plans of a real server at scale); skipped on PGlite.
 */
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRunId } from '../../src/core/ids.js';
import type { Db } from '../../src/store/database.js';
import { RunStore } from '../../src/store/runs-repo.js';
import * as schema from '../../src/store/schema.js';
import { openTestDatabase, testEngine, type TestDatabase } from '../support/db.js';

/** Ended runs in the table when the plans are taken: enough that a scan costs far more than the index. */
const ROWS = 100_000;

class Rollback extends Error {}

describe.skipIf(testEngine !== 'postgres')('run queries on a long history, PostgreSQL', () => {
  let database: TestDatabase;
  let client: postgres.Sql;
  const captured: { query: string; params: unknown[] }[] = [];
  let db: Db;
  let prepared = 0;

  beforeAll(async () => {
    database = await openTestDatabase();
    client = postgres(database.url!, { max: 2, onnotice: () => {} });
    db = drizzle(client, { schema, logger: { logQuery: (query, params) => void captured.push({ query, params }) } }) as unknown as Db;
    await client.unsafe(
      `insert into runs (id, vendor, status, task, cwd, worktree_root, options, origin, supervisor, created_at)
       select 'hr_old' || g, 'codex', 'completed', 'task', '/r', '/r', '{"timeoutMinutes":30}'::jsonb,
              '{"platform":"telegram","chatId":"1","senderId":"1","messageId":"1"}'::jsonb, 'host:1:x', now() - make_interval(secs => g)
       from generate_series(1, $1::int) g`,
      [ROWS],
    );
    await client.unsafe('analyze runs');
  }, 300_000);
  afterAll(async () => {
    await client?.end({ timeout: 5 });
    await database?.dispose();
  });

  /** Index names and seq-scanned relations of the generic plan of `query` with `params`. */
  async function genericPlan(query: string, params: unknown[]): Promise<{ indexes: string[]; seqScans: string[]; plan: unknown }> {
    const literal = (value: unknown): string =>
      typeof value === 'number' ? String(value) : `'${String(value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : value).replaceAll("'", "''")}'`;
    let plan: Record<string, unknown> | undefined;
    // PREPARE outlives the rolled-back transaction on its connection: one name per statement.
    const name = `generic_${(prepared += 1)}`;
    await client
      .begin(async (tx) => {
        await tx.unsafe(`prepare ${name} as ${query}`);
        await tx.unsafe('set local plan_cache_mode = force_generic_plan');
        const execute = params.length > 0 ? `execute ${name}(${params.map(literal).join(', ')})` : `execute ${name}`;
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
    return { indexes, seqScans, plan };
  }

  it(`reads the active and queued runs through an index at ${ROWS} ended runs, under a generic plan`, async () => {
    const store = new RunStore(db);
    const now = new Date();
    const id = newRunId();
    captured.length = 0;
    await store.createRun(
      { id, vendor: 'codex', status: 'starting', task: 't', cwd: '/new', worktreeRoot: '/new', options: { timeoutMinutes: 30, progress: false }, origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '2' }, supervisor: 'host:1:x', createdAt: now },
      { runId: id, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: 'started' },
      4,
      now,
    );
    expect(await store.hasQueued()).toBe(false);
    expect(await store.claimQueued(4, 'host:1:x')).toEqual([]);
    const reads = captured.filter((c) => /^select/i.test(c.query) && /from "runs"/.test(c.query));
    // createRun's read, hasQueued, and claimQueued's two reads.
    expect(reads.length).toBeGreaterThanOrEqual(4);
    for (const read of reads) {
      const { indexes, seqScans, plan } = await genericPlan(read.query, read.params);
      expect(seqScans, `${read.query}\n${JSON.stringify(plan)}`).toEqual([]);
      expect(indexes.some((name) => name === 'runs_status' || name === 'runs_active'), read.query).toBe(true);
    }
  }, 300_000);
});
