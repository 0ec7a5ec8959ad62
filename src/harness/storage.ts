/**
 * The storage gate: the artifact store's quota, the free-disk floor, and a
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
 * The storage gate of launches, with the walk of the run directories off the launch path: the
 * walk grows with the store, and a launch that waited for it would pay for every run before it.
 *
 * - The free-disk floor is read for every launch: one `statfs`, fresh, since anything on the
 *   machine may fill the disk.
 * - The artifact quota comes from the last walk. A passing walk admits the launch whatever its
 *   age, and one older than `maxAgeMs` is renewed in the background (one walk at a time); a
 *   breach it finds refuses the launches after it. The store only grows by baton's own runs, so
 *   at most the launches made during that walk pass a quota the store has just crossed.
 * - With no passing walk (the first launch, or the last walk found a breach or failed) the launch
 *   waits for one: after a refusal every launch walks again, so freed space counts at once.
 *
 * @param maxAgeMs after how long a passing walk is renewed, in ms.
 * @param nowMs the clock, in ms.
 * @returns the gate: resolves when the launch may go on.
 * @throws (the gate) BatonError `quota_exceeded`, `free_space_low` or `storage_unprobeable`, or the
 *   file system's own error from the walk.
 */
export function cachedStorageGate(
  runsDir: string,
  limits: StorageLimits,
  maxAgeMs: number,
  nowMs: () => number,
): () => Promise<void> {
  /** When the last passing walk began; -Infinity when there is none, or a later one failed. */
  let walkedAtMs = -Infinity;
  let walking: Promise<void> | undefined;
  const walk = (): Promise<void> =>
    (walking ??= (async () => {
      const began = nowMs();
      try {
        assertQuota(runsDir, await directorySize(runsDir), limits);
        walkedAtMs = began;
      } catch (err) {
        walkedAtMs = -Infinity;
        throw err;
      } finally {
        walking = undefined;
      }
    })());
  return async () => {
    const free =
      limits.minFreeBytes > 0 ? freeBytes(runsDir).then((bytes) => assertFreeSpace(runsDir, bytes, limits)) : undefined;
    if (walkedAtMs === -Infinity) {
      await Promise.all([free, walk()]);
      return;
    }
    // Not lost: a failure clears the passing walk, so the next launch walks on its own path and is
    // refused with the error.
    if (nowMs() - walkedAtMs >= maxAgeMs) walk().catch(() => undefined);
    await free;
  };
}

/** @throws BatonError `quota_exceeded` when `artifactBytes` is at or over the quota. */
function assertQuota(runsDir: string, artifactBytes: number, limits: StorageLimits): void {
  if (artifactBytes >= limits.artifactQuotaBytes) {
    throw new BatonError(
      'quota_exceeded',
      `The run artifact store ${runsDir} holds ${formatBytes(artifactBytes)}, at or over its quota of ${formatBytes(limits.artifactQuotaBytes)}. Delete old run directories there or raise [harness] artifact_quota_gb, then retry.`,
      { details: { artifactBytes } },
    );
  }
}

/** @throws BatonError `free_space_low` when the floor is set and `freeBytes` is under it. */
function assertFreeSpace(runsDir: string, freeBytes: number, limits: StorageLimits): void {
  if (limits.minFreeBytes > 0 && freeBytes < limits.minFreeBytes) {
    throw new BatonError(
      'free_space_low',
      `Only ${formatBytes(freeBytes)} free on the disk holding ${runsDir}, below the floor of ${formatBytes(limits.minFreeBytes)}. Free some space, or lower [harness] min_free_gb (0 disables the check).`,
      { details: { freeBytes } },
    );
  }
}

/**
 * Sums the sizes of files under `runsDir` and reads free space.
 *
 * @throws BatonError `storage_unprobeable` when free space is wanted but cannot be read.
 */
export async function measureStorage(runsDir: string, probeFree: boolean): Promise<StorageUsage> {
  const artifactBytes = await directorySize(runsDir);
  return { artifactBytes, freeBytes: probeFree ? await freeBytes(runsDir) : undefined };
}

/**
 * Free bytes for an unprivileged user on the file system holding `runsDir` (or its nearest
 * existing ancestor): one `statfs` once the directory exists.
 *
 * @throws BatonError `storage_unprobeable` when it cannot be read.
 */
async function freeBytes(runsDir: string): Promise<number> {
  let probed = runsDir;
  try {
    const fs = await statfs(runsDir).catch(async (err: unknown) => {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      probed = await nearestExisting(runsDir);
      return statfs(probed);
    });
    return fs.bavail * fs.bsize;
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
