/**
 * A `[projects.NAME]` table of `config.toml`: the project's directory and how a run in it is
 * verified. Built from schema.ts's key helpers, handed in, so that this file does not import
 * schema.ts back.
 */
import { z } from 'zod';

/** Default of `[projects.NAME] verify_timeout_minutes`, in minutes. */
export const DEFAULT_VERIFY_TIMEOUT_MINUTES = 15;

/** The key helpers and values of schema.ts this table is built with. */
export interface ProjectKeyHelpers {
  documented<T extends z.ZodType>(schema: T, type: string, description: string): T;
  integerKey(
    range: { unit?: string; min: number; max: number; default: number },
    description: string,
  ): z.ZodDefault<z.ZodNumber>;
  /** schema.ts's directory path: non-empty, no NUL. */
  pathString: z.ZodType<string>;
  /** The longest time limit a key may set, in minutes. */
  maxTimeoutMinutes: number;
}

/** The `[projects.NAME]` table's schema. */
export function projectTableOf({ documented, integerKey, pathString, maxTimeoutMinutes }: ProjectKeyHelpers) {
  return z.strictObject({
    path: documented(
      pathString,
      'path',
      'The project\'s directory, as a plain `NAME = "PATH"` entry gives it; "NODE:PATH" names a directory on another node.',
    ),
    verify: documented(
      z.union([z.string().trim().min(1), z.array(z.string().trim().min(1)).min(1)]).optional(),
      'string or array of strings',
      'Shell commands baton runs, in order, in the run\'s directory once an agent run there completed (e.g. "npm test"); the outcome then says verified or verification failed, with a Fix button. A verify:"CMD" option of the launch replaces them. Never read from the repository.',
    ),
    verify_timeout_minutes: integerKey(
      { unit: 'minutes', min: 1, max: maxTimeoutMinutes, default: DEFAULT_VERIFY_TIMEOUT_MINUTES },
      'Time limit of all verify commands of one run together, in minutes; past it the command is stopped and the verification ends timed out.',
    ),
  });
}
