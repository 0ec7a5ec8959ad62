/**
 * Attack: `[workspace] roots` apply live (src/config/live.ts), but a run queued (or a routed run
 * prepared) while its directory was inside a root kept its place: once the owner took the root
 * away (`roots` edited in config.toml, applied by the running service), the queued run was still
 * claimed and spawned in the revoked directory when a slot freed. The claim must meet the same
 * workspace gate the launch met, with the roots as they stand at the claim.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatonConfig } from '../../src/config/index.js';
import type { RunId } from '../../src/core/ids.js';
import { createHarness, dispatcherFor, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

describe('a queued run after its root was revoked live', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness({
      replaceConfig: ({ root }) =>
        `[harness]\napproved = true\nmax_active = 1\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\n`,
    });
  }, 60_000);
  afterAll(async () => h?.dispose());

  it('is refused at the claim (outside_workspace), never spawned in the revoked directory', async () => {
    const live: { current: BatonConfig; refresh(): Promise<void> } = { current: h.config, refresh: async () => {} };
    const dispatcher = dispatcherFor(h, {
      liveConfig: live,
    });
    const kept = join(h.root, 'kept');
    const revoked = join(h.root, 'revoked');
    for (const dir of [kept, revoked]) await mkdir(dir, { recursive: true });

    const first = await dispatcher.handle(inbound('1', `/codex in:${kept} hang`));
    expect(first.kind).toBe('launched');
    const firstId = (first as { runId: RunId }).runId;
    const second = await dispatcher.handle(inbound('1', `/codex in:${revoked} success`));
    expect(second.kind).toBe('launched');
    const secondId = (second as { runId: RunId }).runId;
    expect((await h.store.runs.getRun(secondId))?.status).toBe('queued');

    // The owner narrows the roots to `kept` only; the running service applies it.
    live.current = { ...h.config, workspace: { ...h.config.workspace, roots: [kept] } };
    await h.supervisor.cancel(firstId, 'owner_cancel');
    await dispatcher.startQueued();
    await waitFor(
      async () => !['queued', 'starting', 'running'].includes((await h.store.runs.getRun(secondId))?.status ?? ''),
      { timeoutMs: 60_000, what: 'the queued run ends', intervalMs: 100 },
    );
    expect(await h.store.runs.getRun(secondId)).toMatchObject({ status: 'failed', reason: 'outside_workspace' });
    expect(h.channel.sent.map((m) => m.text).find((t) => t.startsWith(`[run ${secondId}] failed`))).toContain(
      'outside the workspace',
    );
  }, 120_000);
});
