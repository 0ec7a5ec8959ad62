/**
 * The fleet's lease on a single connection (src/fleet/lease.ts, issue #16 item 2) on the suite's
 * database engine: one holder at a time, a standby takes an expired lease and the old holder is
 * told it lost it, a stopped holder gives it back, and a holder that cannot reach the database
 * gives the connection up before its lease can expire. The node registry lists nodes by
 * database time.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { silentLogger } from '../../src/core/logger.js';
import { describe, expect, it } from 'vitest';
import { DatabaseLease, leaseKey } from '../../src/fleet/lease.js';
import { describeNodes, NodeRegistry } from '../../src/fleet/nodes.js';
import { openDatabase } from '../../src/store/database.js';
import { leases, nodes } from '../../src/store/schema.js';
import { startTcpProxy } from '../fakes/tcp-proxy.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

const logger = silentLogger();
const database = useTestDatabase();

function watched(lease: DatabaseLease): { events: string[]; start(): Promise<void> } {
  const events: string[] = [];
  return {
    events,
    start: () =>
      lease.start({
        onAcquired: () => void events.push('acquired'),
        onLost: (why) => void events.push(`lost: ${why}`),
      }),
  };
}

describe(`fleet lease (${testEngine})`, () => {
  it('the key is a hash of the token, never the token', () => {
    const key = leaseKey('telegram', '123456:SECRET-token');
    expect(key).toMatch(/^telegram:[0-9a-f]{16}$/);
    expect(key).not.toContain('SECRET');
    expect(leaseKey('telegram', 'other')).not.toBe(key);
  });

  it('one holder; an expired lease goes to a standby; a holder whose lease was taken is told', async () => {
    const key = leaseKey('telegram', 'token-a');
    // alpha held the lease and died: it stops renewing, and the row runs out by database time.
    await database.db.execute(
      sql`insert into leases (key, holder, node_name, acquired_at, expires_at) values (${key}, 'alpha:dead', 'alpha', now(), now() + interval '300 milliseconds')`,
    );
    const b = new DatabaseLease({
      db: database.db,
      key,
      holder: 'b:1',
      nodeName: 'beta',
      logger,
      renewMs: 50,
      ttlMs: 60_000,
    });
    const c = new DatabaseLease({
      db: database.db,
      key,
      holder: 'c:1',
      nodeName: 'gamma',
      logger,
      renewMs: 50,
      ttlMs: 60_000,
    });
    const wb = watched(b);
    const wc = watched(c);
    await wb.start();
    expect(b.state()).toEqual({ state: 'standby', holder: 'alpha' });
    expect(wb.events).toEqual([]);
    await waitFor(() => wb.events.includes('acquired'), { what: 'beta takes the expired lease', timeoutMs: 50_000 });
    await wc.start();
    expect(c.state()).toEqual({ state: 'standby', holder: 'beta' });
    expect(wc.events).toEqual([]);

    // Someone else holds it now (e.g. beta was too slow and the lease was taken): beta lets go.
    await database.db.execute(sql`update leases set holder = 'delta:1', node_name = 'delta' where key = ${key}`);
    await waitFor(() => wb.events.length === 2, { what: 'beta is told it lost the lease', timeoutMs: 50_000 });
    expect(wb.events[1]).toMatch(/^lost: node delta took the lease/);
    expect(wc.events).toEqual([]);

    // A holder that stops gives the lease back at once; a standby takes it at its next try.
    await database.db.execute(sql`update leases set holder = 'b:1', node_name = 'beta' where key = ${key}`);
    await waitFor(() => wb.events.length === 3, { what: 'beta holds it again', timeoutMs: 50_000 });
    await b.stop();
    await waitFor(() => wc.events.includes('acquired'), {
      what: 'gamma takes it once beta gave it back',
      timeoutMs: 50_000,
    });
    await c.stop();
    const left = await database.db.select().from(leases);
    expect(left.filter((l) => l.key === key)).toEqual([]);
  });

  it.runIf(testEngine === 'postgres')(
    'a holder that cannot reach the database disconnects before its lease can expire',
    async () => {
      const key = leaseKey('telegram', 'token-b');
      // A pool of its own behind a TCP proxy that then refuses and cuts: every renewal fails.
      const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(database.url!).port || 5432) });
      const own = await openDatabase({ url: proxy.rewrite(database.url!), maxConnections: 1, migrate: false });
      let clock = 0;
      const a = new DatabaseLease({
        db: own.db,
        key,
        holder: 'a:2',
        nodeName: 'alpha',
        logger,
        renewMs: 50,
        ttlMs: 1_000,
        nowMs: () => clock,
      });
      const wa = watched(a);
      await wa.start();
      expect(wa.events).toEqual(['acquired']);
      proxy.refuse();
      proxy.cut();
      // Renewals fail; not yet ttl - renew since the last success: still held.
      clock = 900;
      await sleep(300);
      expect(wa.events).toEqual(['acquired']);
      // From ttl - renew on, the next failed renewal lets go, while the lease may still be ours.
      clock = 950;
      await waitFor(() => wa.events.length === 2, { what: 'alpha lets go', timeoutMs: 50_000 });
      expect(wa.events[1]).toMatch(/could not be renewed in time/);
      await a.stop();
      await Promise.race([own.close().catch(() => undefined), sleep(2_000)]);
      await proxy.close();
    },
  );

  it('nodes: listed with liveness by database time; two live nodes with one name are flagged', async () => {
    const one = new NodeRegistry({
      db: database.db,
      name: 'alpha',
      roots: ['/srv/a'],
      heartbeatMs: 60_000,
      deadAfterMs: 20_000,
      logger,
    });
    const two = new NodeRegistry({
      db: database.db,
      name: 'alpha',
      roots: ['/srv/b'],
      heartbeatMs: 60_000,
      deadAfterMs: 20_000,
      logger,
    });
    await one.start();
    await two.start();
    let list = await one.list();
    expect(list.filter((n) => n.alive)).toHaveLength(2);
    expect(describeNodes(list).join('\n')).toMatch(/two live nodes share this name/);
    await database.db.execute(
      sql`update nodes set heartbeat_at = now() - interval '60 seconds' where instance = ${two.instance}`,
    );
    list = await one.list();
    const dead = list.find((n) => !n.self)!;
    expect(dead.alive).toBe(false);
    expect(dead.silentSeconds).toBeGreaterThanOrEqual(59);
    expect(describeNodes(list).join('\n')).toMatch(/alpha \(this\).*alive\n.*dead \(silent/);
    await two.stop();
    await one.stop();
    expect(await one.list()).toEqual([]);
  });

  it('nodes: a stopped node leaves no row, even with a heartbeat in flight as it stops', async () => {
    // A beat that lands after stop's delete found no row and wrote it again: a node stopped for
    // good stayed in the table (seen as a second node with one pid after a restart).
    for (let round = 0; round < 40; round++) {
      const node = new NodeRegistry({
        db: database.db,
        name: 'beating',
        roots: [],
        heartbeatMs: 1,
        deadAfterMs: 20_000,
        logger,
      });
      await node.start();
      await sleep(round % 5);
      await node.stop();
      await sleep(20);
      const rows = await database.db.select({ instance: nodes.instance }).from(nodes).where(eq(nodes.name, 'beating'));
      expect(rows, `round ${round}`).toEqual([]);
    }
  });
});
