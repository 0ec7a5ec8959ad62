import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedStorageGate, STORAGE_STALE_FACTOR } from '../../src/harness/storage.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-storage-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('cachedStorageGate', () => {
  it('measures at most once per interval while it passes, and every time while breached', async () => {
    let nowMs = 0;
    const gate = cachedStorageGate(dir, { artifactQuotaBytes: 1000, minFreeBytes: 0 }, 60_000, () => nowMs);
    await gate();
    await mkdir(join(dir, 'hr_000000000001'));
    await writeFile(join(dir, 'hr_000000000001', 'events.jsonl'), 'x'.repeat(2000));
    nowMs = 59_999;
    await expect(gate()).resolves.toBeUndefined();
    // Stale: this launch goes on at once (issue #15: no walk on the launch path); the walk it
    // started finds the breach, and the launches after it are refused until it clears.
    nowMs = 60_000;
    await expect(gate()).resolves.toBeUndefined();
    await expect(refusedSoon(gate)).resolves.toMatchObject({ code: 'quota_exceeded' });
    await expect(gate()).rejects.toMatchObject({ code: 'quota_exceeded' });
    await rm(join(dir, 'hr_000000000001'), { recursive: true });
    await expect(gate()).resolves.toBeUndefined();
  });

  it('waits for a new measurement when the last passing one is too old to admit a launch', async () => {
    const own = await mkdtemp(join(dir, 'old-'));
    let nowMs = 0;
    const gate = cachedStorageGate(own, { artifactQuotaBytes: 1000, minFreeBytes: 0 }, 60_000, () => nowMs);
    await gate();
    await writeFile(join(own, 'events.jsonl'), 'x'.repeat(2000));
    nowMs = 60_000 * STORAGE_STALE_FACTOR;
    await expect(gate()).rejects.toMatchObject({ code: 'quota_exceeded' });
  });
});

/** The first refusal of `gate` while it is called again and again (a background walk ends meanwhile). */
async function refusedSoon(gate: () => Promise<void>): Promise<unknown> {
  for (;;) {
    try {
      await gate();
    } catch (err) {
      return err;
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
