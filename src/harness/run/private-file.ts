/** Files of a run directory that only the owner may read. */
import { chmod, writeFile } from 'node:fs/promises';

/** Writes `content` to `path` as a 0600 file (also when it existed with a wider mode). */
export async function writePrivate(path: string, content: string): Promise<void> {
  await writeFile(path, content, { mode: 0o600 });
  await chmod(path, 0o600);
}
