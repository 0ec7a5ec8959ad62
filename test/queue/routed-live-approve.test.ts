/**
 * Attack: a node that receives no chat commands (a build box the fleet routes to) never re-read
 * config.toml: the live config was refreshed only before a command or a doctor report, not before
 * a queue pass. A routed run refused "not yet approved on node gamma. Approve with `baton
 * approve` there" stayed refused after the owner did exactly that (the CLI even says "a running
 * service applies it to its next command; no restart needed"), until gamma was restarted.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveConfig } from '../../src/config/live.js';
import { silentLogger } from '../../src/core/logger.js';
import { createHarness, dispatcherFor, type TestHarness } from '../support/harness.js';
import { createRoutedRunRow } from '../support/rows.js';

const toml = (approved: boolean, root: string): string =>
  `[harness]\napproved = ${approved}\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`;

describe('a node that only takes routed runs', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness({ replaceConfig: ({ root }) => toml(false, root) });
  }, 60_000);
  afterAll(async () => h?.dispose());

  it('applies `baton approve` to its next queue pass, without a command or a restart', async () => {
    const configPath = join(h.dir, 'config.toml');
    await writeFile(configPath, toml(false, h.root));
    const live = new LiveConfig({
      configPath,
      homeDir: join(h.dir, 'home'),
      config: h.config,
      logger: silentLogger(),
      restartHow: 'restart it',
    });
    await live.refresh();
    const fleet = { name: 'gamma', list: async () => [] };
    const dispatcher = dispatcherFor(h, {
      liveConfig: live,
      fleet,
    });
    const app = join(h.root, 'app');
    await mkdir(app, { recursive: true });

    // `baton approve` on gamma, after the service started there.
    await writeFile(configPath, toml(true, h.root));
    // alpha routes a run to gamma; the NOTIFY makes gamma run a queue pass.
    const { id } = await createRoutedRunRow(h.store, { from: 'alpha', to: 'gamma', target: app });
    await dispatcher.startQueued();
    const end = Date.now() + 60_000;
    while (
      Date.now() < end &&
      ['queued', 'starting', 'running'].includes((await h.store.runs.getRun(id))?.status ?? '')
    )
      await sleep(100);
    expect(await h.store.runs.getRun(id)).toMatchObject({ status: 'completed', cwd: app });
  }, 120_000);
});
