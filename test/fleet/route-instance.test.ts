/**
 * Attack: two live processes with one `[node] name` shared the routed runs by name, so half of
 * them went to the impostor. A routed launch is addressed to one start of the node (the newest
 * live instance in the `nodes` table), and a process of the same name that is not that instance
 * neither prepares nor claims it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonConfig } from '../../src/config/index.js';
import type { RunId } from '../../src/core/ids.js';
import type { NodeView } from '../../src/fleet/nodes.js';
import { nodes } from '../../src/store/schema.js';
import { createHarness, dispatcherFor, inbound, type TestHarness } from '../support/harness.js';

describe('a run routed to a node with an impostor of the same name', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness();
  }, 120_000);
  afterAll(async () => h?.dispose());

  it('is addressed to the newest live start of the node and claimed by that process only', async () => {
    const target = join(h.root, 'app');
    const alphaRoot = join(h.dir, 'alpha-only');
    for (const dir of [target, alphaRoot]) await mkdir(dir, { recursive: true });
    const earlier = new Date(Date.now() - 60_000);
    const view = (name: string, instance: string, roots: string[], startedAt: Date, self: boolean): NodeView => ({
      name,
      host: instance.split(':')[0]!,
      pid: 1,
      roots,
      startedAt,
      heartbeatAt: new Date(),
      silentSeconds: 0,
      alive: true,
      self,
      instance,
    });
    const impostor = 'otherhost:7:aaaa';
    const real = 'gammahost:8:bbbb';
    for (const [instance, startedAt] of [
      [impostor, earlier],
      [real, new Date()],
    ] as const) {
      await h.database.db.insert(nodes).values({
        instance,
        name: 'gamma',
        host: instance.split(':')[0]!,
        pid: 1,
        roots: [h.root],
        startedAt,
        heartbeatAt: sql`now()` as unknown as Date,
      });
    }
    const list = async (): Promise<NodeView[]> => [
      view('alpha', 'alphahost:1:cccc', [alphaRoot], earlier, true),
      view('gamma', impostor, [h.root], earlier, false),
      view('gamma', real, [h.root], new Date(), false),
    ];
    const alphaConfig: BatonConfig = { ...h.config, workspace: { ...h.config.workspace, roots: [alphaRoot] } };
    const alpha = dispatcherFor(h, {
      config: alphaConfig,
      fleet: { name: 'alpha', list, instance: 'alphahost:1:cccc' },
    });
    const sent = await alpha.handle(inbound('1', `/codex in:${target} success`));
    expect(sent.kind).toBe('launched');
    const runId = (sent as { runId: RunId }).runId;
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'queued', node: 'gamma', nodeInstance: real });

    // The impostor's queue pass leaves it alone.
    const byImpostor = dispatcherFor(h, {
      config: h.config,
      fleet: { name: 'gamma', list, instance: impostor },
    });
    await byImpostor.startQueued();
    await sleep(200);
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'queued', nodeInstance: real });

    const byReal = dispatcherFor(h, { fleet: { name: 'gamma', list, instance: real } });
    await byReal.startQueued();
    const end = Date.now() + 60_000;
    while (
      Date.now() < end &&
      ['queued', 'starting', 'running'].includes((await h.store.runs.getRun(runId))?.status ?? '')
    )
      await sleep(100);
    expect(await h.store.runs.getRun(runId)).toMatchObject({ status: 'completed', node: 'gamma', cwd: target });
  }, 120_000);
});
