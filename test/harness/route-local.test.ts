/**
 * Routing a launch in a fleet (issue #16 item 3) without a query where none can change the
 * answer (issue #15): a directory inside this node's own roots runs here, whatever the other
 * nodes are, so the node list is not read for it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { NodeView } from '../../src/fleet/nodes.js';
import type { InstalledVendor } from '../../src/harness/supervisor.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';
import type { VendorName } from '../../src/harness/vendors/types.js';
import { createHarness, FAKE_CODEX, inbound, type TestHarness } from '../support/harness.js';

let h: TestHarness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.dispose();
});

describe('fleet routing of a launch', () => {
  it('reads the node list only for a directory outside this node’s roots', async () => {
    let lists = 0;
    const fleet = {
      name: 'alpha',
      list: async (): Promise<NodeView[]> => {
        lists += 1;
        return [];
      },
    };
    const vendors = new Map<VendorName, InstalledVendor>([
      ['codex', { vendor: codexVendor, binaryPath: FAKE_CODEX, version: 'fake' }],
    ]);
    const dispatcher = new Dispatcher({
      config: h.config,
      store: h.store,
      outbox: h.outbox,
      supervisor: h.supervisor,
      clock: systemClock,
      logger: silentLogger(),
      vendors,
      homeDir: h.dir,
      runsDir: h.runsDir,
      fleet,
    });
    const inside = join(h.root, 'inside');
    await mkdir(inside);
    expect((await dispatcher.handle(inbound('1', `/codex in:${inside} success`))).kind).toBe('launched');
    expect(lists).toBe(0);
    // Outside every root of this node: another node may own it, so the list is read (and, with
    // no node owning it, the gate here refuses it).
    expect(await dispatcher.handle(inbound('1', `/codex in:${join(h.dir, 'home')} success`))).toMatchObject({
      kind: 'refused',
      code: 'outside_workspace',
    });
    expect(lists).toBe(1);
    await h.supervisor.idle();
  });
});
