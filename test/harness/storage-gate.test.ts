import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedStorageGate } from '../../src/harness/storage.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-storage-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('cachedStorageGate', () => {
  it('walks the store off the launch path while a walk has passed, and on it while breached', async () => {
    let nowMs = 0;
    const gate = cachedStorageGate(dir, { artifactQuotaBytes: 1000, minFreeBytes: 0 }, 60_000, () => nowMs);
    await gate();
    await mkdir(join(dir, 'hr_000000000001'));
    await writeFile(join(dir, 'hr_000000000001', 'events.jsonl'), 'x'.repeat(2000));
    nowMs = 59_999;
    await expect(gate()).resolves.toBeUndefined();
    // Over a minute old: this launch goes on at once (issue #15: no walk on the launch path); the
    // walk it started finds the breach, and the launches after it are refused until it clears.
    nowMs = 60_000;
    await expect(gate()).resolves.toBeUndefined();
    await expect(refusedSoon(gate)).resolves.toMatchObject({ code: 'quota_exceeded' });
    await expect(gate()).rejects.toMatchObject({ code: 'quota_exceeded' });
    await rm(join(dir, 'hr_000000000001'), { recursive: true });
    await expect(gate()).resolves.toBeUndefined();
  });

  it('lets a launch after a long quiet spell go on at once, and renews the walk behind it', async () => {
    const own = await mkdtemp(join(dir, 'quiet-'));
    let nowMs = 0;
    const gate = cachedStorageGate(own, { artifactQuotaBytes: 1000, minFreeBytes: 0 }, 60_000, () => nowMs);
    await gate();
    await writeFile(join(own, 'events.jsonl'), 'x'.repeat(2000));
    nowMs = 6 * 60 * 60_000;
    await expect(gate()).resolves.toBeUndefined();
    await expect(refusedSoon(gate)).resolves.toMatchObject({ code: 'quota_exceeded' });
  });

  it('reads the free-disk floor for every launch', async () => {
    const own = await mkdtemp(join(dir, 'free-'));
    const gate = cachedStorageGate(
      own,
      { artifactQuotaBytes: 1000, minFreeBytes: Number.MAX_SAFE_INTEGER },
      60_000,
      () => 0,
    );
    await expect(gate()).rejects.toMatchObject({ code: 'free_space_low' });
    await expect(gate()).rejects.toMatchObject({ code: 'free_space_low' });
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
