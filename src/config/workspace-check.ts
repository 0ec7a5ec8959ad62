/**
 * Workspace settings that load fine but cannot work: a root that does not exist, a `default` or
 * a `[projects]` alias that points nowhere or outside every root. They are not fatal (a root may
 * be a disk mounted later), so they become doctor warnings and banner lines, never a refused start.
 */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BatonConfig } from './resolve.js';
import { splitNodeTarget } from '../core/node-target.js';

/** The real path of an existing directory, or why not (`missing` / `not a directory`). */
async function directory(dir: string): Promise<{ real: string } | { problem: string }> {
  try {
    const real = await realpath(dir);
    if ((await stat(real)).isDirectory()) return { real };
    return { problem: 'is not a directory' };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      problem:
        code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be read (${code ?? 'unknown error'})`,
    };
  }
}

function inside(dir: string, root: string): boolean {
  const rel = path.relative(root, dir);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

/**
 * Checks `[workspace] roots`, `[workspace] default` and every `[projects]` alias against the
 * filesystem (symlinks followed, as the launch gate does).
 *
 * @returns one sentence per problem, each with its fix; empty when all is well. Never throws.
 */
export async function workspaceWarnings(config: Pick<BatonConfig, 'workspace' | 'projects'>): Promise<string[]> {
  const warnings: string[] = [];
  const realRoots: string[] = [];
  for (const root of config.workspace.roots) {
    const found = await directory(root);
    if ('real' in found) realRoots.push(found.real);
    else warnings.push(`workspace root ${root} ${found.problem}: create it, or remove it from [workspace] roots`);
  }
  const target = async (label: string, dir: string, fix: string): Promise<void> => {
    const found = await directory(dir);
    if ('problem' in found) warnings.push(`${label} ${dir} ${found.problem}: ${fix}`);
    else if (!realRoots.some((root) => inside(found.real, root))) {
      warnings.push(
        `${label} ${dir} is outside every workspace root, so no run can use it: \`baton grant path ${dir}\`, or ${fix}`,
      );
    }
  };
  if (config.workspace.defaultCwd !== undefined)
    await target('[workspace] default', config.workspace.defaultCwd, 'point it at a checkout inside a root');
  // An alias naming a node (`buildbox:~/code/app`) points at that node's disk: it checks it.
  for (const [alias, dir] of config.projects)
    if (!splitNodeTarget(dir)) await target(`[projects] ${alias} =`, dir, `point ${alias} at a checkout inside a root`);
  return warnings;
}
