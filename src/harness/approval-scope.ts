/**
 * The exact rule of "Allow for this run": each tool call gets a `kind`, and a call is allowed
 * without asking when the run holds an "Allow for this run" decision of the same kind.
 *
 * - `Bash`: `Bash:<program> <subcommand>` when the command is a simple one of a program baton
 *   knows, with no option or argument that names code to run and no path outside the project
 *   (see approval-bash.ts); otherwise `Bash=<command>`, which covers only the identical command.
 * - File tools (Write, Edit, MultiEdit, NotebookEdit, Read, Glob, Grep, LS): `<tool>:.`, every call
 *   of that tool inside the run's directory; a path outside it, under baton's own files, in the
 *   home's dotfiles, a `.git` or the repository's `core.hooksPath`, or a hard-linked file, is `ask!…`
 *   (see approval-paths.ts).
 * - `ask!…` kinds always ask: no decision covers them, and their card offers no "Allow for this run".
 * - codex's `ApplyPatch` (a patch of one or more files): `ApplyPatch:.` when every path is inside
 *   the run's directory and unmarked, else `ask!…`; codex's `Permissions` requests always ask.
 * - Any other tool (WebFetch, MCP tools): the tool's name.
 */
import { markOfPath, type PathMark, type PathScope } from './approval-paths.js';
import { readBash } from './approval-bash.js';

export type { PathScope } from './approval-paths.js';

/** The file tools and the input field naming their path (claude's tool input schemas). */
const PATH_FIELDS: Readonly<Record<string, string>> = {
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
  Read: 'file_path',
  Glob: 'path',
  Grep: 'path',
  LS: 'path',
};

/** The tool name of a codex patch (see {@link patchScope}). */
export const APPLY_PATCH = 'ApplyPatch';

/**
 * Tools whose every call asks: codex's requests for more permissions (network, paths outside
 * its sandbox), which no earlier decision may cover.
 */
const ALWAYS_ASKING_TOOLS: ReadonlySet<string> = new Set(['Permissions']);

/** Prefix of the kinds no decision covers. */
export const ALWAYS_ASK = 'ask!';

/** What "Allow for this run" would cover of one tool call. */
export interface ApprovalScope {
  kind: string;
  /** Why this call always asks (shown on the card), for an `ask!` kind. */
  mark?: PathMark;
  /** The path the mark is about, as resolved. */
  path?: string;
}

/**
 * The kind of one tool call (see the module comment). Reads the file system (symbolic links) for
 * the paths it names; never throws for a path that does not exist.
 */
export async function approvalScope(
  tool: string,
  input: Record<string, unknown>,
  scope: PathScope,
): Promise<ApprovalScope> {
  if (tool === 'Bash') {
    const command = typeof input['command'] === 'string' ? input['command'].replace(/^[ \t]+|[ \t]+$/g, '') : '';
    const exact = { kind: `Bash=${command}` };
    const reading = readBash(command);
    if (!reading.covered) return exact;
    for (const path of reading.paths) if ((await markOfPath(path, scope)) !== undefined) return exact;
    return { kind: `Bash:${reading.kind}` };
  }
  if (tool === APPLY_PATCH) return patchScope(input, scope);
  if (ALWAYS_ASKING_TOOLS.has(tool)) return { kind: `${ALWAYS_ASK}${tool}` };
  const field = PATH_FIELDS[tool];
  if (field === undefined || !Object.hasOwn(PATH_FIELDS, tool)) return { kind: tool };
  const value = input[field];
  // Glob, Grep and LS default to the working directory; the others always name a file.
  const path =
    typeof value === 'string' && value !== '' ? value : field === 'path' && value === undefined ? '.' : undefined;
  if (path === undefined) return { kind: `${ALWAYS_ASK}${tool}`, mark: 'outside the project' };
  // Glob's pattern is a path too: `../../**/.ssh/*` or an absolute one lists files elsewhere.
  const pattern = tool === 'Glob' ? input['pattern'] : undefined;
  if (pattern !== undefined && (typeof pattern !== 'string' || /^[/~]|(^|\/)\.\.(\/|$)/.test(pattern))) {
    return { kind: `${ALWAYS_ASK}${tool}:${path}`, mark: 'outside the project', path };
  }
  const mark = /[\u0000-\u001f\u007f]/.test(path) ? 'outside the project' : await markOfPath(path, scope);
  return mark ? { kind: `${ALWAYS_ASK}${tool}:${path}`, mark, path } : { kind: `${tool}:.` };
}

/**
 * A codex patch (`item/fileChange/requestApproval`, input `{changes: [{path, kind, movePath?,
 * diff}], grantRoot?}`): `ApplyPatch:.`, every patch inside the run's directory, when each path
 * and each move's destination is inside
 * it and unmarked; a path that is marked, no path at all, or a `grantRoot` (codex asking to write
 * under a root for the rest of its session) always asks.
 */
async function patchScope(input: Record<string, unknown>, scope: PathScope): Promise<ApprovalScope> {
  const changes = Array.isArray(input['changes']) ? input['changes'] : [];
  // A move (`movePath`) writes its destination: it is checked like the file it leaves.
  const paths = changes.flatMap((c) => {
    const change = typeof c === 'object' && c !== null ? (c as { path?: unknown; movePath?: unknown }) : {};
    return change.movePath === undefined ? [change.path] : [change.path, change.movePath];
  });
  if (input['grantRoot'] !== undefined && input['grantRoot'] !== null) {
    const root = typeof input['grantRoot'] === 'string' ? input['grantRoot'] : '';
    return { kind: `${ALWAYS_ASK}${APPLY_PATCH}:${root}`, mark: 'outside the project', path: root };
  }
  if (paths.length === 0) return { kind: `${ALWAYS_ASK}${APPLY_PATCH}`, mark: 'outside the project' };
  for (const path of paths) {
    if (typeof path !== 'string' || path === '' || /[\u0000-\u001f\u007f]/.test(path))
      return { kind: `${ALWAYS_ASK}${APPLY_PATCH}`, mark: 'outside the project' };
    const mark = await markOfPath(path, scope);
    if (mark) return { kind: `${ALWAYS_ASK}${APPLY_PATCH}:${path}`, mark, path };
  }
  return { kind: `${APPLY_PATCH}:.` };
}

/** Whether a kind is one no decision covers. */
export function alwaysAsks(kind: string): boolean {
  return kind.startsWith(ALWAYS_ASK);
}

/** The words of a kind, for the chat ("every `npm test …` command …"). */
export function describeKind(kind: string): string {
  if (kind.startsWith('Bash:'))
    return `every \`${kind.slice(5)} …\` command that names no other code to run and no path outside the project`;
  if (kind.startsWith('Bash=')) return 'this exact command';
  if (alwaysAsks(kind)) return 'nothing: this call always asks';
  if (kind.endsWith(':.'))
    return `every ${kind.slice(0, -2)} inside the run's directory (not .git, not baton's own files)`;
  return `every ${kind} call`;
}
