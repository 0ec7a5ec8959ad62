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
  it('measures at most once per interval while it passes, and every time while breached', async () => {
    let nowMs = 0;
    const gate = cachedStorageGate(dir, { artifactQuotaBytes: 1000, minFreeBytes: 0 }, 60_000, () => nowMs);
    await gate();
    await mkdir(join(dir, 'hr_000000000001'));
    await writeFile(join(dir, 'hr_000000000001', 'events.jsonl'), 'x'.repeat(2000));
    nowMs = 59_999;
    await expect(gate()).resolves.toBeUndefined();
    nowMs = 60_000;
    await expect(gate()).rejects.toMatchObject({ code: 'quota_exceeded' });
    await expect(gate()).rejects.toMatchObject({ code: 'quota_exceeded' });
    await rm(join(dir, 'hr_000000000001'), { recursive: true });
    await expect(gate()).resolves.toBeUndefined();
  });
});
