/**
 * Routing a launch in a fleet (issue #16 item 3) without a query where none can change the
 * answer (issue #15): a directory inside this node's own roots runs here, whatever the other
 * nodes are, so the node list is not read for it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeView } from '../../src/fleet/nodes.js';
import { createHarness, dispatcherFor, inbound, type TestHarness } from '../support/harness.js';

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
    const dispatcher = dispatcherFor(h, {
      homeDir: h.dir,
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
