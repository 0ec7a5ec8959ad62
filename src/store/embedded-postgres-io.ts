/**
 * Two small helpers of the embedded PostgreSQL modules: execa loaded on first use, and whether a
 * path exists.
 */
import { stat } from 'node:fs/promises';

/** execa, loaded on first use: ~100 modules that start-up on PostgreSQL does without. */
export async function loadExeca(): Promise<typeof import('execa').execa> {
  return (await import('execa')).execa;
}

/** Whether `path` exists (any kind of file); never throws. */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
