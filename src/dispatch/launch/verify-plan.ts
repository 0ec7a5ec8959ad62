/**
 * Which commands verify a run, fixed at launch: the owner's `verify:"…"` options, else the
 * parent's plan (a Fix or a resume keeps what its parent was verified with), else the
 * `[projects.NAME] verify` of the project the run's directory is in. Only the owner's config
 * and message are read: nothing in the repository can set or change a run's verify commands.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import type { ProjectVerify } from '../../config/resolve.js';
import { DEFAULT_VERIFY_TIMEOUT_MINUTES } from '../../config/schema.js';
import type { RunRow } from '../../store/schema.js';
import type { VerifyPlanJson } from '../../types/run-facts.js';
import type { LaunchOptions } from '../command.js';

/**
 * The run's verify plan.
 *
 * @param dirs the run's directory in the checkout (for a worktree run, the directory it was made
 *   from), absolute and with symlinks resolved.
 * @returns undefined when nothing verifies the run.
 */
export async function verifyPlanOf(
  options: LaunchOptions,
  parent: RunRow | undefined,
  projects: readonly ProjectVerify[],
  dirs: readonly string[],
): Promise<VerifyPlanJson | undefined> {
  const project = await projectOf(projects, dirs);
  if (options.verify?.length) {
    return {
      commands: [...options.verify],
      timeoutMinutes:
        project?.timeoutMinutes ?? parent?.options.verify?.timeoutMinutes ?? DEFAULT_VERIFY_TIMEOUT_MINUTES,
      source: 'message',
    };
  }
  if (parent?.options.verify) return parent.options.verify;
  if (!project) return undefined;
  return { commands: [...project.commands], timeoutMinutes: project.timeoutMinutes, source: 'config' };
}

/** The innermost project holding one of `dirs`; undefined when none does. */
async function projectOf(
  projects: readonly ProjectVerify[],
  dirs: readonly string[],
): Promise<ProjectVerify | undefined> {
  if (projects.length === 0) return undefined;
  let best: { project: ProjectVerify; depth: number } | undefined;
  for (const project of projects) {
    // The run's directory has its symlinks resolved; the project's path is as the owner wrote it.
    const root = await realpath(project.path).catch(() => project.path);
    for (const dir of dirs) {
      const rel = relative(root, dir);
      if (rel.startsWith('..') || isAbsolute(rel)) continue;
      const depth = root.length;
      if (!best || depth > best.depth) best = { project, depth };
    }
  }
  return best?.project;
}
