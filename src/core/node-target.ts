/**
 * A launch target that names its node: `buildbox:~/code/app` (in `in:` or as a `[projects]`
 * alias). Plain text parsing shared by the config (which keeps such aliases unresolved) and the
 * fleet's routing.
 */
import { isAbsolute } from 'node:path';

/** Pattern of a `[node] name` (the config schema's rule), then `:` and the path. */
const NODE_NAME = /^([A-Za-z0-9][A-Za-z0-9_.-]{0,62}):(.+)$/s;

/**
 * Splits `node:path` where `path` is absolute or starts with `~` (the named node's home).
 *
 * @returns undefined for anything else (a plain path, an alias, `a:b` with a relative `b`).
 */
export function splitNodeTarget(target: string): { node: string; path: string } | undefined {
  const match = NODE_NAME.exec(target);
  if (!match) return undefined;
  const path = match[2]!;
  if (!isAbsolute(path) && path !== '~' && !path.startsWith('~/')) return undefined;
  return { node: match[1]!, path };
}
