/**
 * Attack: `[workspace] roots` apply live on a node, but the `nodes` row the rest of the fleet
 * routes by kept the roots the node started with. After `baton grant path /srv/data` on gamma,
 * alpha still sent launches for /srv/data/app nowhere (ran them locally, refused as outside its
 * workspace); after a revoke on gamma, alpha kept routing there. The heartbeat writes the roots
 * as they stand.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { NodeRegistry } from '../../src/fleet/nodes.js';
import { useTestDatabase } from '../support/database.js';

const database = useTestDatabase();

describe('a node’s roots in the fleet', () => {
  it('follow the live config on the next heartbeat', async () => {
    let roots: readonly string[] = ['/srv/one'];
    const gamma = new NodeRegistry({
      db: database.db,
      name: 'gamma-live-roots',
      roots: () => roots,
      heartbeatMs: 50,
      deadAfterMs: 60_000,
      logger: silentLogger(),
    });
    await gamma.start();
    try {
      const rootsOfGamma = async () => (await gamma.list()).find((n) => n.name === 'gamma-live-roots')?.roots;
      expect(await rootsOfGamma()).toEqual(['/srv/one']);
      roots = ['/srv/one', '/srv/data'];
      const end = Date.now() + 30_000;
      while (Date.now() < end && (await rootsOfGamma())?.length !== 2) await sleep(50);
      expect(await rootsOfGamma()).toEqual(['/srv/one', '/srv/data']);
    } finally {
      await gamma.stop();
    }
  }, 60_000);
});
