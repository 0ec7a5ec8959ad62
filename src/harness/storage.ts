/**
 * The storage gate (PRODUCT.md §6 item 8): the artifact store's quota, the free-disk floor, and a
 * filesystem that cannot be probed each refuse a launch with their own code and message.
 */
import { readdir, stat, statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BatonError } from '../core/errors.js';

/** Limits the gate enforces. */
export interface StorageLimits {
  /** Quota of the whole artifact store, in bytes. */
  artifactQuotaBytes: number;
  /** Free-disk floor, in bytes; 0 disables the probe. */
  minFreeBytes: number;
}

/** What the probes saw, for doctor and errors. */
export interface StorageUsage {
  artifactBytes: number;
  /** Free bytes for an unprivileged user on the store's filesystem; undefined when not probed. */
  freeBytes: number | undefined;
}

/**
 * How long a passing measurement may still admit launches while a new one is taken in the
 * background, in multiples of the gate's `maxAgeMs`; an older one is re-measured before the launch.
 */
export const STORAGE_STALE_FACTOR = 10;

/**
 * A storage gate that keeps the walk of the run directories off the launch path (issue #15: the
 * walk grows with the store, and one launch a minute paid for it; the soak bench's store of 2,500
 * runs took 784 ms to walk).
 *
 * - A passing measurement younger than `maxAgeMs` admits a launch at once.
 * - One between `maxAgeMs` and `maxAgeMs × STORAGE_STALE_FACTOR` also admits it at once, and a new
 *   measurement starts in the background (one at a time); a breach it finds refuses the next launch.
 * - With no passing measurement (the first launch, a breach seen, one older than that) the launch
 *   waits for a new one: a breach is re-checked on every launch until it clears, so freed space is
 *   seen at once.
 *
 * @param maxAgeMs how long a passing measurement is fresh, in ms.
 * @param nowMs the clock, in ms.
 * @returns the gate: resolves when the launch may go on.
 * @throws (the gate) as {@link assertStorage}: `quota_exceeded`, `free_space_low`,
 *   `storage_unprobeable`, or the file system's own error from the walk.
 */
export function cachedStorageGate(runsDir: string, limits: StorageLimits, maxAgeMs: number, nowMs: () => number): () => Promise<void> {
  /** When the last passing measurement began; -Infinity when there is none, or a later one failed. */
  let passedAtMs = -Infinity;
  let measuring: Promise<void> | undefined;
  const measure = (): Promise<void> =>
    (measuring ??= (async () => {
      const began = nowMs();
      try {
        await assertStorage(runsDir, limits);
        passedAtMs = began;
      } catch (err) {
        passedAtMs = -Infinity;
        throw err;
      } finally {
        measuring = undefined;
      }
    })());
  return async () => {
    const ageMs = nowMs() - passedAtMs;
    if (ageMs < maxAgeMs) return;
    if (ageMs < maxAgeMs * STORAGE_STALE_FACTOR) {
      // Not lost: a failure clears the passing measurement, so the next launch measures again
      // on its own path and is refused with the error.
      measure().catch(() => undefined);
      return;
    }
    await measure();
  };
}

/**
 * Measures the store and refuses when a bound is breached.
 *
 * @param runsDir - `$BATON_HOME/harness/runs`; it need not exist yet (a fresh install is never
 *   refused): free space is read on its nearest existing ancestor.
 * @throws BatonError `quota_exceeded`, `free_space_low`, or `storage_unprobeable`.
 */
export async function assertStorage(runsDir: string, limits: StorageLimits): Promise<StorageUsage> {
  const usage = await measureStorage(runsDir, limits.minFreeBytes > 0);
  if (usage.artifactBytes >= limits.artifactQuotaBytes) {
    throw new BatonError(
      'quota_exceeded',
      `The run artifact store ${runsDir} holds ${formatBytes(usage.artifactBytes)}, at or over its quota of ${formatBytes(limits.artifactQuotaBytes)}. Delete old run directories there or raise [harness] artifact_quota_gb, then retry.`,
      { details: { ...usage } },
    );
  }
  if (limits.minFreeBytes > 0 && usage.freeBytes !== undefined && usage.freeBytes < limits.minFreeBytes) {
    throw new BatonError(
      'free_space_low',
      `Only ${formatBytes(usage.freeBytes)} free on the disk holding ${runsDir}, below the floor of ${formatBytes(limits.minFreeBytes)}. Free some space, or lower [harness] min_free_gb (0 disables the check).`,
      { details: { ...usage } },
    );
  }
  return usage;
}

/**
 * Sums the sizes of files under `runsDir` and reads free space.
 *
 * @throws BatonError `storage_unprobeable` when free space is wanted but cannot be read.
 */
export async function measureStorage(runsDir: string, probeFree: boolean): Promise<StorageUsage> {
  const artifactBytes = await directorySize(runsDir);
  if (!probeFree) return { artifactBytes, freeBytes: undefined };
  const probed = await nearestExisting(runsDir);
  try {
    const fs = await statfs(probed);
    return { artifactBytes, freeBytes: fs.bavail * fs.bsize };
  } catch (err) {
    throw new BatonError(
      'storage_unprobeable',
      `Cannot read the free space of the filesystem holding ${probed}: ${err instanceof Error ? err.message : String(err)}. Fix access to it, or set [harness] min_free_gb = 0 to skip the check.`,
      { cause: err, details: { path: probed } },
    );
  }
}

async function nearestExisting(path: string): Promise<string> {
  let current = path;
  for (;;) {
    try {
      await stat(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

async function directorySize(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
  let total = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directorySize(path);
    else if (entry.isFile()) total += (await stat(path).catch(() => ({ size: 0 }))).size;
  }
  return total;
}

/** `1.5 GiB`, `820 MiB`, `12 KiB`, `300 B`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit === 0 ? value : value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
