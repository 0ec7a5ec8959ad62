/**
 * `baton patch RUN_ID [--include-ignored]`: a run's patch on the machine, to stdout as git's bytes
 * (`baton patch hr_… | git apply`). With `--include-ignored` it also holds the files the outcome's
 * patch left out (ignored before the run, or secret-looking): those never travel to a chat.
 */
import { join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { isRunId } from '../core/ids.js';
import { patchOf } from '../harness/patch-record.js';
import { didYouMean, usageWith } from '../wording/suggest.js';
import type { CliCommand } from './command.js';

/** The usage line of `baton patch`. */
export const PATCH_USAGE = 'Usage: baton patch RUN_ID [--include-ignored]';

/**
 * Writes the patch of run `argv[0]` to `write`.
 *
 * @returns the exit code (0).
 * @throws BatonError `usage` for a bad argument list or id; `patch_unavailable`, `git_failed`
 *   (see `patchOf`).
 */
export const patchCommand: CliCommand<string, Buffer> = async (argv, batonHome, write) => {
  const includeLeftOut = argv.includes('--include-ignored');
  const rest = argv.filter((a) => a !== '--include-ignored');
  const odd = rest.find((a) => a.startsWith('-'));
  if (odd !== undefined) throw new BatonError('usage', usageWith(didYouMean(odd, ['--include-ignored']), PATCH_USAGE));
  const [runId, ...extra] = rest;
  if (runId === undefined || extra.length > 0) throw new BatonError('usage', PATCH_USAGE);
  // The id names a directory: only baton's own shape may reach the path.
  if (!isRunId(runId))
    throw new BatonError(
      'usage',
      `${JSON.stringify(runId)} is not a run id (hr_ and 12 hex digits, as in [run hr_…]). ${PATCH_USAGE}`,
    );
  write(await patchOf(join(batonHome, 'harness', 'runs', runId), { includeLeftOut }));
  return 0;
};
