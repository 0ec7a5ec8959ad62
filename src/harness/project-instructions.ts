/**
 * A project's instructions for its agent (claude's `CLAUDE.md`), read by baton and handed to the
 * CLI as text, because the CLI itself may not read the project's files: the same loading reads
 * the project's settings (hooks, permissions, endpoints), which a repository must not set.
 * Only the words travel: no setting, no `@file` import is followed (an import may name any file
 * on the machine), and each file must be a regular file inside the checkout.
 */
import { constants } from 'node:fs';
import { chmod, lstat, open, realpath, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { decodeUtf8 } from './attachments.js';
import { isInside } from './workspace.js';

/** Most bytes of instructions all files together may give one run; a file past it is left out. */
export const MAX_PROJECT_INSTRUCTIONS_BYTES = 64 * 1024;

/** What {@link collectProjectInstructions} found. */
export interface ProjectInstructions {
  /** The instructions, each file under a heading naming it; undefined when no file gave any. */
  text: string | undefined;
  /** Real paths of the files given, in order. */
  files: string[];
  /** One sentence per file left out, naming it and why (for the run's outcome). */
  skipped: string[];
}

/**
 * The instruction files named `names` (relative, e.g. `CLAUDE.md`, `.claude/CLAUDE.md`) in each
 * directory from the top of the checkout holding `cwd` down to `cwd` itself, outermost first (the
 * order claude reads them in). Outside a git checkout only `cwd` is looked in.
 *
 * A file is left out, with a sentence in `skipped`, when it (or a link on its way) leads outside
 * the checkout, is not a regular file (a FIFO would block the read), is not UTF-8 text, or would
 * take the total past `maxBytes`. A missing file is no sentence.
 *
 * @param cwd the run's directory, real and past the workspace gate.
 * @param maxBytes @default MAX_PROJECT_INSTRUCTIONS_BYTES
 */
export async function collectProjectInstructions(
  cwd: string,
  names: readonly string[],
  maxBytes = MAX_PROJECT_INSTRUCTIONS_BYTES,
): Promise<ProjectInstructions> {
  const top = await checkoutTop(cwd);
  const dirs = [top];
  for (const part of relative(top, cwd).split(sep).filter(Boolean)) dirs.push(join(dirs.at(-1)!, part));
  const out: ProjectInstructions = { text: undefined, files: [], skipped: [] };
  const parts: string[] = [];
  let total = 0;
  for (const dir of dirs) {
    for (const name of names) {
      const path = join(dir, name);
      const read = await readInstructionFile(path, top, maxBytes - total);
      if (read.kind === 'missing') continue;
      if (read.kind === 'skipped') {
        out.skipped.push(`${path} was not given to the agent: ${read.why}.`);
        continue;
      }
      if (read.text.trim() === '') continue;
      total += read.bytes;
      out.files.push(read.real);
      parts.push(`Contents of ${path} (project instructions, checked into the repository):\n\n${read.text.trimEnd()}`);
    }
  }
  if (parts.length > 0) out.text = `${parts.join('\n\n')}\n`;
  return out;
}

/**
 * {@link collectProjectInstructions}, written to `path` (0600) when any file gave instructions.
 *
 * @returns `file`: `path` when written; `skipped`: the sentences of the files left out.
 */
export async function writeProjectInstructions(
  cwd: string,
  names: readonly string[],
  path: string,
): Promise<{ file?: string; skipped: string[] }> {
  const found = await collectProjectInstructions(cwd, names);
  if (found.text === undefined) return { skipped: found.skipped };
  await writeFile(path, found.text, { mode: 0o600 });
  await chmod(path, 0o600);
  return { file: path, skipped: found.skipped };
}

type ReadResult =
  | { kind: 'missing' }
  | { kind: 'skipped'; why: string }
  | { kind: 'read'; text: string; bytes: number; real: string };

async function readInstructionFile(path: string, top: string, budgetBytes: number): Promise<ReadResult> {
  let real: string;
  try {
    real = await realpath(path);
  } catch {
    return { kind: 'missing' };
  }
  if (!isInside(real, top)) return { kind: 'skipped', why: `it leads outside the checkout (to ${real})` };
  let handle;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the checked path stays the opened one.
    handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (err) {
    return { kind: 'skipped', why: `it cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { kind: 'skipped', why: 'it is not a regular file' };
    if (stat.size > budgetBytes) {
      return {
        kind: 'skipped',
        why: `it is ${stat.size} bytes, more than the ${budgetBytes} bytes of instructions left (at most ${MAX_PROJECT_INSTRUCTIONS_BYTES} in all); shorten it`,
      };
    }
    // One byte more than allowed: a file that grew since the stat is caught, not cut.
    const buffer = Buffer.alloc(stat.size + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > budgetBytes)
      return { kind: 'skipped', why: `it grew past the ${budgetBytes} bytes of instructions left while it was read` };
    const text = decodeUtf8(buffer.subarray(0, bytesRead));
    if (text === undefined || text.includes('\u0000')) return { kind: 'skipped', why: 'it is not UTF-8 text' };
    return { kind: 'read', text, bytes: bytesRead, real };
  } finally {
    await handle.close();
  }
}

/**
 * The nearest directory from `cwd` up that holds a `.git` git would take (a directory with a
 * `HEAD`, or a worktree's `gitdir:` file), as git finds its top; `cwd` when there is none. Looked
 * up on disk rather than by running git: it happens on every claude launch, before the spawn. A
 * stray `.git` that git passes over (an empty directory in /tmp, say) must not widen the files
 * read above the run's directory.
 */
async function checkoutTop(cwd: string): Promise<string> {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (await holdsGitDir(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

/** Whether `path` is what git accepts as a `.git`: a directory holding `HEAD`, or a `gitdir: ` file. */
async function holdsGitDir(path: string): Promise<boolean> {
  const stat = await lstat(path).catch(() => undefined);
  if (stat?.isDirectory())
    return lstat(join(path, 'HEAD')).then(
      () => true,
      () => false,
    );
  if (!stat?.isFile()) return false;
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
  if (!handle) return false;
  try {
    const head = Buffer.alloc(8);
    const { bytesRead } = await handle.read(head, 0, 8, 0);
    return head.subarray(0, bytesRead).toString('latin1') === 'gitdir: ';
  } finally {
    await handle.close();
  }
}
