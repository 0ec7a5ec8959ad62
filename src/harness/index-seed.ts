/**
 * Seeding a private snapshot index: from a copy of the user's index (its stat data spare git
 * re-hashing unchanged files), or by moving baton's own launch index into place.
 */
import { constants } from 'node:fs';
import { chmod, open, rename, rm, writeFile } from 'node:fs/promises';

/**
 * Seeds a private index: `seed(userIndex)` makes `indexPath` a copy of the user's index (see
 * {@link seedIndex}), except the first time when `own` is given: then baton's own index `own`
 * (the launch snapshot's, whose tree is already written) is moved there instead. Its stat data
 * are the launch's, so `add` re-reads only what changed since, and its trees are cached, so
 * write-tree recomputes only the directories that changed. @returns whether the index was seeded.
 */
export type Seeder = ((userIndex: string) => Promise<boolean>) & { indexPath: string };

/** The {@link Seeder} of the private index `indexPath`, moving `own` into place first when given. */
export function seeder(indexPath: string, own: string | undefined): Seeder {
  let pending = own;
  const seed = async (userIndex: string): Promise<boolean> => {
    const from = pending;
    pending = undefined;
    if (from !== undefined) {
      await rm(indexPath, { force: true });
      if (
        await rename(from, indexPath).then(
          () => true,
          () => false,
        )
      )
        return true;
    }
    return seedIndex(userIndex, indexPath);
  };
  return Object.assign(seed, { indexPath });
}

/**
 * Makes `indexPath` a private copy (0600) of the user's index `from`, replacing what was there;
 * true when copied. The user's index only seeds git's stat cache: when it is no regular file or
 * cannot be read, `indexPath` is left absent and git starts from an empty index (a full hash).
 */
async function seedIndex(from: string, indexPath: string): Promise<boolean> {
  await rm(indexPath, { force: true });
  const copied = await copyRegularFile(from, indexPath).then(
    () => true,
    () => false,
  );
  if (copied) await chmod(indexPath, 0o600);
  return copied;
}

/**
 * Copies `from` only when it is a regular file, opened without following a symlink and without
 * blocking (a FIFO or device planted at `.git/index` would hang a plain copy, outside any timeout).
 */
async function copyRegularFile(from: string, to: string): Promise<void> {
  const source = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    if (!(await source.stat()).isFile()) throw new Error(`${from} is not a regular file`);
    await writeFile(to, await source.readFile(), { mode: 0o600 });
  } finally {
    await source.close();
  }
}
