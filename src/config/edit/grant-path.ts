/** `baton grant path DIR`: adds a directory to `[workspace] roots` in `config.toml`. */
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { BatonError } from '../../core/errors.js';
import { resolveUserPath } from '../resolve.js';
import { editConfig, table, type ConfigEdit } from './file-edit.js';
import { appendToArray, edited, locate, tomlString } from './toml-text.js';

/** Options of {@link grantPath}. */
export interface GrantPathOptions {
  /** Absolute home directory: `~` in `dir` and in existing roots stands for it. */
  readonly homeDir: string;
  /** Absolute directory a relative `dir` is taken from. @default process.cwd() */
  readonly cwd?: string | undefined;
  /** Grant a root that covers the whole disk or the home directory anyway (`--force`). @default false */
  readonly force?: boolean | undefined;
}

/**
 * Appends a directory to `[workspace] roots`, as its real path (symlinks followed), written as an
 * absolute TOML basic string. Handles `roots = []`, one-line and multi-line arrays, an absent key
 * and an absent `[workspace]` table; same preservation, checks and atomic replace as
 * {@link approveConfig}. A directory already granted (compared by real path) is not added again.
 *
 * @returns `root`: the real path that is (now) a workspace root.
 * @throws BatonError `cwd_missing` when `dir` does not exist, cannot be resolved or is not a directory.
 * @throws BatonError `root_too_broad` when `dir` is `/`, the home directory or above it, unless `force`.
 * @throws BatonError `config_invalid`, `config_unreadable` as for {@link approveConfig}.
 */
export async function grantPath(
  configPath: string,
  dir: string,
  options: GrantPathOptions,
): Promise<ConfigEdit & { readonly root: string }> {
  const root = await realDirectory(
    resolveUserPath(dir, { homeDir: options.homeDir, baseDir: options.cwd ?? process.cwd() }),
  );
  if (!options.force) {
    const home = await realpath(options.homeDir).catch(() => path.resolve(options.homeDir));
    if (coversAll(root, home)) {
      throw new BatonError(
        'root_too_broad',
        `${root} covers ${root === path.parse(root).root ? 'the whole disk' : `your whole home directory (${home})`}: agents could then work on any file there. ` +
          'Grant the directory that holds your checkouts, e.g. `baton grant path ~/code`, or add --force if you mean it.',
        { details: { path: root } },
      );
    }
  }
  const edit = await editConfig(
    configPath,
    options.homeDir,
    `add ${JSON.stringify(root)} to [workspace] roots`,
    async (text, config) => {
      const granted = await Promise.all(config.workspace.roots.map((r) => realpath(r).catch(() => r)));
      if (granted.includes(root)) return undefined;
      return {
        text: edited(
          locate(text, 'workspace', 'roots'),
          (v) => appendToArray(text, v, tomlString(root)),
          `[${tomlString(root)}]`,
        ),
        expect: (data) => {
          const workspace = table(data, 'workspace');
          workspace.roots = [...(Array.isArray(workspace.roots) ? workspace.roots : []), root];
        },
      };
    },
  );
  return { ...edit, root };
}

/** True when `root` is the filesystem root, the home directory, or a directory above home. */
function coversAll(root: string, home: string): boolean {
  if (root === path.parse(root).root) return true;
  const rel = path.relative(root, home);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The real path of `dir`, which must be a directory. @throws BatonError `cwd_missing`. */
async function realDirectory(dir: string): Promise<string> {
  const fix = `Create it or check the path, then run \`baton grant path ${dir}\` again.`;
  try {
    const real = await realpath(dir);
    if ((await stat(real)).isDirectory()) return real;
    throw new BatonError('cwd_missing', `${dir} is not a directory. Grant a directory instead.`, {
      details: { path: dir },
    });
  } catch (err) {
    if (err instanceof BatonError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' || code === 'ENOTDIR' ? 'does not exist' : `cannot be resolved (${code ?? 'unknown error'})`;
    throw new BatonError('cwd_missing', `${dir} ${why}. ${fix}`, { cause: err, details: { path: dir, errno: code } });
  }
}
