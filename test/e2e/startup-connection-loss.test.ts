/**
 * A database connection lost under one of start-up's statements (issue #12 item 3): a loaded run
 * of the suite saw `baton start`, on a database with `idle_session_timeout`, send its reconcile
 * query on a connection the server was closing; postgres.js rejected it with CONNECTION_CLOSED and
 * the service exited 1 ("baton: unexpected error") instead of starting. Here a loopback proxy
 * (test/fakes/tcp-proxy.ts) closes the connection carrying one chosen start-up statement, the
 * way such a server does, once per start; each start must still reach `baton ready`, with one
 * line saying it started again, one node row, and a database that answers.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readServiceState } from '../../src/service/control-api/service-state.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { makeTestHome } from '../support/home.js';
import { startService } from '../support/service.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
let proxy: TcpProxy;

beforeAll(async () => {
  if (!onPostgres) return;
  const server = new URL(process.env.DATABASE_URL!);
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
});
afterAll(async () => {
  await proxy?.close();
});

/** Start-up statements, each named by a piece of its SQL text as the driver sends it. */
const STATEMENTS: { what: string; text: string }[] = [
  { what: 'the reconcile of orphaned runs', text: 'starts_with("runs"."supervisor"' },
  { what: 'closing approvals of gone runs', text: 'update "approvals"' },
  { what: 'releasing inbound claims of dead processes', text: 'starts_with("inbound_events"."claimed_by"' },
  { what: "this node's row", text: 'insert into "nodes"' },
];

describe.skipIf(!onPostgres)('a database connection lost during start-up', () => {
  for (const statement of STATEMENTS) {
    it(`starts again when it is lost under ${statement.what}`, async () => {
      const home = await makeTestHome('baton-startloss-', [inject('codexBinDir'), inject('claudeBinDir')]);
      const directUrl = home.env.DATABASE_URL!;
      try {
        // The schema first, so the trap meets the statement of the start itself, not a migration.
        const first = await startService(home.env);
        await first.stop();
        const sprung = proxy.closeWhenClientSends(statement.text);
        const service = await startService({ ...home.env, DATABASE_URL: proxy.rewrite(directUrl) });
        try {
          await sprung;
          expect(service.stdout()).toContain('baton ready');
          expect(service.stderr()).toMatch(
            /start-up lost its database connection \(.+\); starting again \(attempt 2 of 3\)/,
          );
          expect(service.stderr()).not.toContain('unexpected error');
          expect(service.exitCode()).toBeUndefined();
          // The attempt that started holds this process's only node row. (The first service's
          // row may be left too: on a loaded machine its stop can outlast the support's SIGKILL.)
          const admin = postgres(directUrl, { max: 1, onnotice: () => {} });
          try {
            const nodes = await admin<{ pid: number }[]>`select pid from nodes where pid = ${service.pid}`;
            expect(nodes).toHaveLength(1);
          } finally {
            await admin.end();
          }
          const state = await readServiceState(home.batonHome);
          const ready = await fetch(`http://127.0.0.1:${state!.port}/health/ready`);
          const body = (await ready.json()) as { rows: { area: string; status: string }[] };
          expect(['ok', 'warn']).toContain(body.rows.find((row) => row.area === 'database')?.status);
        } finally {
          await service.stop();
        }
      } finally {
        await home.dispose();
      }
    }, 180_000);
  }
});
