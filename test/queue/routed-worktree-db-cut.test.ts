/**
 * Attack: a database cut while a node prepares a routed run that asked for its own worktree. The
 * worktree (branch `baton/<run id>`) was made, the write that records it failed, and the error
 * left the worktree behind; the next queue pass made the same worktree again, git refused the
 * existing branch, and the run ended `failed` (git_failed) for a blip the pass was meant to retry.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunStore } from '../../src/store/runs-repo.js';
import { createHarness, dispatcherFor, type TestHarness } from '../support/harness.js';
import { createRoutedRunRow } from '../support/rows.js';

describe('a database cut while a routed run gets its worktree', () => {
  let h: TestHarness;
  beforeAll(async () => {
    h = await createHarness();
  }, 60_000);
  afterAll(async () => h?.dispose());

  it('retries on the next pass and runs, instead of failing on its own leftover branch', async () => {
    const app = join(h.root, 'app');
    await mkdir(app, { recursive: true });
    const git = (...args: string[]) => execa('git', ['-C', app, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args]);
    await git('init', '-q');
    await writeFile(join(app, 'README'), 'x\n');
    await git('add', 'README');
    await git('commit', '-qm', 'first');
    let cut = true;
    const queue = new Proxy(h.store.queue, {
      get(target, key, receiver) {
        if (key === 'placeRouted' && cut) {
          return async () => {
            cut = false;
            throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
          };
        }
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    // The aggregate with its queue repository cut once; the other repositories are the real ones.
    const store = Object.assign(Object.create(Object.getPrototypeOf(h.store)), h.store, { queue }) as RunStore;
    const fleet = { name: 'gamma', list: async () => [] };
    const dispatcher = dispatcherFor(h, {
      store,
      worktreesDir: join(h.dir, 'baton', 'worktrees'),
      fleet,
    });
    const { id } = await createRoutedRunRow(h.store, { from: 'alpha', to: 'gamma', target: app, worktree: true });
    await dispatcher.startQueued();
    expect(cut).toBe(false);
    expect((await h.store.runs.getRun(id))?.status).toBe('queued');
    // The reconciliation's next pass.
    await dispatcher.startQueued();
    const end = Date.now() + 60_000;
    while (
      Date.now() < end &&
      ['queued', 'starting', 'running'].includes((await h.store.runs.getRun(id))?.status ?? '')
    )
      await sleep(100);
    expect(await h.store.runs.getRun(id)).toMatchObject({ status: 'completed', branch: `baton/${id}` });
  }, 120_000);
});
