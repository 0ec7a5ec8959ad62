/**
 * Which files of a run's change stay out of its `.patch` (the patch travels to a chat platform):
 * files ignored before the run (a run that edits only `.gitignore` would otherwise ship the `.env`
 * it un-ignored), and files whose name or content looks like a secret. Each is named in the
 * outcome; the owner can still get them on the machine (`baton patch ID --include-ignored`).
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { BatonError } from '../core/errors.js';
import { runGit, type GitOptions } from './git.js';
import type { LeftOutFile } from '../types/run-facts.js';

/**
 * Options that make `git diff` output a plain patch `git apply` takes whatever the repository's
 * config says (`diff.noprefix`, `diff.mnemonicPrefix`, `diff.relative`, `color.diff`; git-config(1)).
 */
export const PLAIN_DIFF: readonly string[] = [
  '--no-ext-diff',
  '--no-textconv',
  '--no-color',
  '--no-relative',
  '--src-prefix=a/',
  '--dst-prefix=b/',
];

export type { LeftOutFile, LeftOutReason } from '../types/run-facts.js';

/**
 * File names (the last path part, case-insensitive) of keys and credential files: dotenv files
 * but their templates, PEM/PKCS#12/Java key stores, SSH private keys, netrc/pgpass/htpasswd,
 * package-registry and cloud credential files.
 */
const SECRET_NAMES: readonly RegExp[] = [
  /^\.env$/,
  /^\.env\.(?!(example|sample|template|dist|defaults)$).+$/,
  /\.(pem|key|p12|pfx|jks|keystore|kdbx|asc|gpg|ovpn)$/,
  /^id_(rsa|dsa|ecdsa|ed25519)(?!.*\.pub$)/,
  /^(\.netrc|_netrc|\.pgpass|\.htpasswd|\.npmrc|\.pypirc|\.git-credentials|credentials|credentials\.json|service-account.*\.json)$/,
];

/**
 * Token shapes of well-known services and private-key armour (the formats each issuer
 * documents): PEM/OpenSSH/PGP private keys, AWS access key ids, GitHub tokens (classic and
 * fine-grained), Slack tokens and webhooks, OpenAI and Anthropic keys, Google API keys, Stripe
 * live keys, Telegram bot tokens, npm tokens.
 */
const SECRET_CONTENT: readonly RegExp[] = [
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/,
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/,
  /\bxapp-\d-[A-Za-z0-9-]{10,}/,
  /hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]+/,
  /\bsk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}/,
  /\bAIza[0-9A-Za-z_-]{35}\b/,
  /\b[rs]k_live_[0-9A-Za-z]{20,}/,
  /\b\d{8,10}:AA[A-Za-z0-9_-]{33}\b/,
  /\bnpm_[A-Za-z0-9]{36}\b/,
];

/** Whether a file name (its last part) is one of a key or credential file. */
export function hasSecretName(path: string): boolean {
  const name = (path.split('/').at(-1) ?? path).toLowerCase();
  return SECRET_NAMES.some((re) => re.test(name));
}

/** Whether `content` holds something shaped like a private key or a known service's token. */
export function hasSecretContent(content: Buffer): boolean {
  // latin1: one character per byte, so a pattern matches in any encoding that keeps ASCII as is.
  const text = content.toString('latin1');
  return SECRET_CONTENT.some((re) => re.test(text));
}

/** One entry of `git diff --raw -z`: status, new blob id, new mode, path. */
interface RawEntry {
  status: string;
  newMode: string;
  newBlob: string;
  path: string;
}

/** Decodes git's path bytes; a name that is not UTF-8 cannot be matched by a pathspec baton writes. */
const PATH_DECODER = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses `git diff --raw -z --no-renames --no-abbrev` output.
 *
 * @throws BatonError `patch_unavailable` when a changed file's name is not UTF-8: an exclude
 *   pathspec built from a decoded name would miss it, and the file would ship unchecked.
 */
function parseRaw(out: Buffer): RawEntry[] {
  const parts: string[] = [];
  for (let at = 0; at < out.length; ) {
    const end = out.indexOf(0, at);
    const bytes = out.subarray(at, end === -1 ? out.length : end);
    try {
      parts.push(PATH_DECODER.decode(bytes));
    } catch {
      throw new BatonError(
        'patch_unavailable',
        "A changed file's name is not UTF-8, so baton cannot tell whether it belongs in the patch, and the patch is not attached.",
      );
    }
    if (end === -1) break;
    at = end + 1;
  }
  parts.push('');
  const entries: RawEntry[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = parts[i]!.replace(/^:/, '').split(' ');
    const path = parts[i + 1]!;
    if (meta.length < 5) break;
    entries.push({ newMode: meta[1]!, newBlob: meta[3]!, status: meta[4]!, path });
  }
  return entries;
}

/** The contents of `blobs` (ids) with one `git cat-file --batch`, by id. */
async function readBlobs(blobs: readonly string[], base: GitOptions, runDir: string): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  if (blobs.length === 0) return found;
  // runGit takes no stdin: the ids go through a file, read by `--batch` from a shell-free redirect.
  const list = join(runDir, 'patch-filter-blobs.txt');
  await writeFile(list, `${blobs.join('\n')}\n`, { mode: 0o600 });
  try {
    const out = (await runGit(['cat-file', `--batch`], { ...base, binaryStdout: true, stdinPath: list })).stdoutBytes!;
    let at = 0;
    while (at < out.length) {
      const eol = out.indexOf(0x0a, at);
      if (eol === -1) break;
      const [id = '', type = '', size = ''] = out.subarray(at, eol).toString('utf8').split(' ');
      if (type === 'missing' || size === '') {
        at = eol + 1;
        continue;
      }
      const bytes = Number(size);
      found.set(id, out.subarray(eol + 1, eol + 1 + bytes));
      at = eol + 1 + bytes + 1;
    }
  } finally {
    await rm(list, { force: true });
  }
  return found;
}

/** Above this many `.gitignore` paths to look up, the whole start tree is listed instead (argv stays small). */
const MAX_LISTED_IGNORE_FILES = 2_000;

/** `.gitignore`, `a/.gitignore`, `a/b/.gitignore` for `a/b/c.txt`: the files whose rules apply to each path. */
function ancestorIgnoreFiles(paths: readonly string[]): string[] {
  const files = new Set<string>();
  for (const path of paths) {
    const parts = path.split('/');
    for (let depth = 0; depth < parts.length; depth++) files.add([...parts.slice(0, depth), '.gitignore'].join('/'));
  }
  return [...files].sort();
}

/**
 * The added paths that the start tree's ignore rules ignored: the start tree's `.gitignore` files
 * are written to a scratch work tree and `git check-ignore --no-index` asks git itself (its own
 * pattern rules, plus `info/exclude` and `core.excludesFile`).
 */
async function ignoredAtStart(
  added: readonly string[],
  startTree: string,
  base: GitOptions,
  runDir: string,
): Promise<Set<string>> {
  if (added.length === 0) return new Set();
  const gitDir = (await runGit(['rev-parse', '--absolute-git-dir'], base)).stdout.trim();
  // Only the `.gitignore` files of the added paths' directories can ignore them: those are
  // listed, not the whole tree (a repository of 100,000 files lists 100,000 lines).
  const wanted = ancestorIgnoreFiles(added);
  const listing = (
    await runGit(
      [
        'ls-tree',
        '-r',
        '-z',
        '--full-tree',
        startTree,
        ...(wanted.length <= MAX_LISTED_IGNORE_FILES ? ['--', ...wanted.map((p) => `:(top,literal)${p}`)] : []),
      ],
      { ...base, binaryStdout: true },
    )
  ).stdoutBytes!;
  const rules = listing
    .toString('utf8')
    .split('\0')
    .map((line) => /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(line))
    .filter(
      (m): m is RegExpExecArray =>
        m !== null &&
        (m[1] === '100644' || m[1] === '100755') &&
        (m[3] === '.gitignore' || m[3]!.endsWith('/.gitignore')),
    );
  const scratch = join(runDir, 'ignore-rules-at-start');
  await rm(scratch, { recursive: true, force: true });
  await mkdir(scratch, { recursive: true, mode: 0o700 });
  try {
    const blobs = await readBlobs(
      rules.map((m) => m[2]!),
      base,
      runDir,
    );
    for (const m of rules) {
      const target = join(scratch, m[3]!);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, blobs.get(m[2]!) ?? Buffer.alloc(0));
    }
    const list = join(runDir, 'patch-filter-paths.txt');
    await writeFile(list, added.map((p) => `${p}\0`).join(''), { mode: 0o600 });
    try {
      const checked = await runGit(['check-ignore', '--no-index', '-z', '--stdin'], {
        ...base,
        cwd: scratch,
        env: { GIT_DIR: gitDir, GIT_WORK_TREE: scratch },
        allowFailure: true, // 1: none of them is ignored
        stdinPath: list,
      });
      return new Set(checked.stdout.split('\0').filter(Boolean));
    } finally {
      await rm(list, { force: true });
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * The files of the change `startTree`..`endTree` to leave out of its patch, sorted by path.
 *
 * @param runDir a directory of the run for scratch files (removed before this returns).
 * @throws BatonError `git_failed` when git fails.
 */
export async function filesToLeaveOut(
  startTree: string,
  endTree: string,
  base: GitOptions,
  runDir: string,
): Promise<LeftOutFile[]> {
  const raw = (
    await runGit(['diff', ...PLAIN_DIFF, '--raw', '-z', '--no-renames', '--no-abbrev', startTree, endTree], {
      ...base,
      binaryStdout: true,
    })
  ).stdoutBytes!;
  const entries = parseRaw(raw).filter((e) => e.status !== 'D' && e.newMode !== '160000');
  const ignored = await ignoredAtStart(
    entries.filter((e) => e.status === 'A').map((e) => e.path),
    startTree,
    base,
    runDir,
  );
  const byName = entries.filter((e) => !ignored.has(e.path) && hasSecretName(e.path));
  const rest = entries.filter((e) => !ignored.has(e.path) && !hasSecretName(e.path) && e.newMode !== '120000');
  const contents = await readBlobs([...new Set(rest.map((e) => e.newBlob))], base, runDir);
  const out: LeftOutFile[] = [
    ...entries.filter((e) => ignored.has(e.path)).map((e) => ({ path: e.path, why: 'ignored_before' as const })),
    ...byName.map((e) => ({ path: e.path, why: 'secret_name' as const })),
    ...rest
      .filter((e) => hasSecretContent(contents.get(e.newBlob) ?? Buffer.alloc(0)))
      .map((e) => ({ path: e.path, why: 'secret_content' as const })),
  ];
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** `git diff` pathspecs that exclude `files` (literally: no glob in a name is read as one). */
export function excludePathspecs(files: readonly LeftOutFile[]): string[] {
  return files.length === 0 ? [] : ['--', ...files.map((f) => `:(top,literal,exclude)${f.path}`)];
}
