/**
 * The record of a run's change kept in its run directory: the trees at launch and at the end (in
 * the repository's object store, written by the snapshots) and the files left out of its patch.
 * `baton patch ID` reads it on the machine, where the owner may ask for the whole change.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { runGit } from './git.js';
import { excludePathspecs, PLAIN_DIFF, type LeftOutFile } from './patch-filter.js';

/** The record's file name in a run directory. */
export const PATCH_RECORD_FILE = 'patch-trees.json';

/** What {@link writePatchRecord} keeps. */
export interface PatchRecord {
  /** The working tree's top directory. */
  toplevel: string;
  /** Tree object ids (hex) of the launch and end snapshots. */
  startTree: string;
  endTree: string;
  leftOut: LeftOutFile[];
}

/** Writes `record` to the run directory (0600). */
export async function writePatchRecord(runDir: string, record: PatchRecord): Promise<void> {
  await writeFile(join(runDir, PATCH_RECORD_FILE), `${JSON.stringify(record)}\n`, { mode: 0o600 });
}

/**
 * Reads a run's record.
 *
 * @throws BatonError `patch_unavailable` when the run has none (it changed nothing, was not in a
 *   git working tree, or its directory was removed by retention).
 */
export async function readPatchRecord(runDir: string): Promise<PatchRecord> {
  let text: string;
  try {
    text = await readFile(join(runDir, PATCH_RECORD_FILE), 'utf8');
  } catch (err) {
    throw new BatonError(
      'patch_unavailable',
      `No recorded change in ${runDir}: the run changed nothing, ran outside a git working tree, or its directory was removed. See its outcome with baton runs ID.`,
      { cause: err },
    );
  }
  const parsed = JSON.parse(text) as Partial<PatchRecord>;
  const hex = /^[0-9a-f]{40,64}$/;
  if (
    typeof parsed.toplevel !== 'string' ||
    !hex.test(parsed.startTree ?? '') ||
    !hex.test(parsed.endTree ?? '') ||
    !Array.isArray(parsed.leftOut)
  ) {
    throw new BatonError(
      'patch_unavailable',
      `${join(runDir, PATCH_RECORD_FILE)} is not a change record baton wrote; it was edited or damaged.`,
    );
  }
  return parsed as PatchRecord;
}

/** Options of {@link patchOf}. */
export interface PatchOfOptions {
  /** Include the files the outcome's patch left out. @default false */
  includeLeftOut?: boolean;
  /** `PATH` to find git on. @default this process's */
  path?: string;
}

/**
 * A run's patch as git's bytes (applies with `git apply`), made again from its record.
 *
 * @throws BatonError `patch_unavailable` (see {@link readPatchRecord}); `git_failed` when git
 *   fails, e.g. the trees were pruned from the repository (`git gc` removes unreferenced objects
 *   after two weeks by default).
 */
export async function patchOf(runDir: string, options: PatchOfOptions = {}): Promise<Buffer> {
  const record = await readPatchRecord(runDir);
  const exclude = options.includeLeftOut ? [] : excludePathspecs(record.leftOut);
  const result = await runGit(
    ['diff', ...PLAIN_DIFF, '--binary', '--full-index', record.startTree, record.endTree, ...exclude],
    {
      cwd: record.toplevel,
      binaryStdout: true,
      maxBufferBytes: 1024 * 1024 * 1024,
      ...(options.path ? { path: options.path } : {}),
    },
  );
  return result.stdoutBytes!;
}

/** {@link patchOf} with every file, the left-out ones included. */
export async function fullPatch(runDir: string): Promise<Buffer> {
  return patchOf(runDir, { includeLeftOut: true });
}
