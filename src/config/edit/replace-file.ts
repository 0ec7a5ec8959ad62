/** Replaces a file atomically, keeping its mode. */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';

/** Write temp in the same directory, fsync, rename over, fsync the directory (best effort). */
export async function replaceFile(target: string, text: string, mode: number): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    try {
      await handle.chmod(mode);
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  const dirHandle = await open(dir, 'r').catch(() => undefined);
  await dirHandle?.sync().catch(() => undefined);
  await dirHandle?.close();
}
