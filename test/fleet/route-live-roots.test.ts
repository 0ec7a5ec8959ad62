/**
 * Attack: `baton grant path` applies live (src/config/live.ts), and the workspace gate reads the
 * live roots, but the fleet routing read the roots this node started with. A directory granted
 * here after the start, and also under another live node's roots, was sent to that other node
 * (another machine, another checkout) instead of running here where the owner just granted it.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonConfig } from '../../src/config/index.js';
import type { RunId } from '../../src/core/ids.js';
import type { NodeView } from '../../src/fleet/nodes.js';
import { createHarness, dispatcherFor, inbound, type TestHarness } from '../support/harness.js';

describe('routing with roots granted live', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness({
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\n[workspace]\nroots = [${JSON.stringify(join(root, 'a'))}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    });
  }, 60_000);
  afterAll(async () => h?.dispose());

  it('runs here a directory granted here after the start, though another node’s roots hold it too', async () => {
    const granted = join(h.root, 'b', 'app');
    await mkdir(granted, { recursive: true });
    await mkdir(join(h.root, 'a'), { recursive: true });
    const node = (name: string, roots: string[], self: boolean): NodeView => ({
      name,
      host: name,
      pid: 1,
      roots,
      startedAt: new Date(),
      heartbeatAt: new Date(),
      silentSeconds: 0,
      alive: true,
      self,
    });
    const fleet = {
      name: 'alpha',
      list: async () => [node('alpha', [join(h.root, 'a')], true), node('gamma', [h.root], false)],
    };
    // `baton grant path <root>/b` while the service runs: the live config has it.
    const live: { current: BatonConfig; refresh(): Promise<void> } = {
      current: { ...h.config, workspace: { ...h.config.workspace, roots: [join(h.root, 'a'), join(h.root, 'b')] } },
      refresh: async () => {},
    };
    const dispatcher = dispatcherFor(h, {
      liveConfig: live,
      fleet,
    });
    const result = await dispatcher.handle(inbound('1', `/codex in:${granted} success`));
    expect(result.kind).toBe('launched');
    const run = await h.store.runs.getRun((result as { runId: RunId }).runId);
    expect(run).toMatchObject({ node: 'alpha', cwd: granted });
  }, 120_000);
});
