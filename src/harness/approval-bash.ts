/**
 * What an "Allow for this run" of one Bash command covers. A rule covers later commands of the
 * same program and subcommand (`git tag`, `npm test`, `npm run build`, `ls`) when the program is
 * one baton knows and the later command has no option or argument that names code to run (git
 * `-c`, `--upload-pack`, `--exec`; `find -exec`, `-delete`; npm `--script-shell`…) or a path
 * outside the project. Anything else — another program, shell syntax, a quote baton does not
 * read, a non-ASCII character — covers only the identical command.
 */

/** How one known program is read. */
interface ProgramRule {
  /** Subcommands that may be covered; absent: the program has none (`ls`, `find`). */
  subcommands?: ReadonlySet<string>;
  /** Subcommands whose first argument is part of what is covered (`npm run build`). */
  named?: ReadonlySet<string>;
  /** Subcommands covered only with no argument (`npm install`, not `npm install left-pad`). */
  bare?: ReadonlySet<string>;
  /** Options allowed before the subcommand; any other there covers only the identical command. */
  globals?: ReadonlySet<string>;
  /** Option style: `gnu` (`-abc` clusters, `--long` and its unambiguous prefixes) or `single` (`-name`, go's and find's). */
  style: 'gnu' | 'single';
  /** Long (or `single`-style) option names that name code to run or a file to write outside. */
  deniedLong: readonly string[];
  /** Short option letters with that effect (`gnu` clusters). */
  deniedShort?: string;
  /** Per subcommand, more of both. */
  perSubcommand?: Readonly<Record<string, { deniedLong?: readonly string[]; deniedShort?: string }>>;
  /** Whether a single-dash word may also be a long option (`-shell=…` to npm's nopt). */
  singleDashLong?: boolean;
  /** Whether `--` ends only the leading options and the words after it still are options (find's expression). */
  dashDashKeepsOptions?: boolean;
  /** Arguments that name code: a predicate of `find`, a remote helper of git. */
  deniedArgument?: (word: string) => boolean;
}

const set = (...words: string[]): ReadonlySet<string> => new Set(words);

/** A tilde prefix other than the home's own: `~user`, `~+`, `~-`, also after `=` or `:`. */
const OTHER_TILDE = /(^|[=:])~(?![/=:]|$)/;

// `file://` is left out: it names any repository on this machine, not a place in the project.
const GIT_REMOTE_OK = /^(https?|ssh|git):\/\//;
const NPM_DENIED = [
  'script-shell',
  'shell',
  'node-options',
  'userconfig',
  'globalconfig',
  'call',
  'editor',
  'browser',
  'git',
  'viewer',
  'prefix',
  'registry',
  'global',
  'location',
  'init-module',
  'onload-script',
  'dir',
  'cwd',
  'use-yarnrc',
  'config',
  'node-gyp',
];
const NPM_INSTALL = [
  'install',
  'i',
  'in',
  'ins',
  'inst',
  'insta',
  'instal',
  'isnt',
  'isnta',
  'isntal',
  'add',
  'ci',
  'clean-install',
  'install-clean',
  'ic',
  'it',
];
const NPM_RUN = ['run', 'run-script', 'rum', 'urn'];
const READERS: ProgramRule = { style: 'gnu', deniedLong: [] };

const PROGRAMS: Readonly<Record<string, ProgramRule>> = {
  git: {
    style: 'gnu',
    globals: set('--no-pager', '-P', '--no-optional-locks', '--no-replace-objects', '--literal-pathspecs'),
    subcommands: set(
      'status',
      'log',
      'show',
      'diff',
      'branch',
      'tag',
      'add',
      'commit',
      'checkout',
      'switch',
      'restore',
      'rm',
      'mv',
      'stash',
      'fetch',
      'pull',
      'push',
      'merge',
      'rebase',
      'reset',
      'grep',
      'blame',
      'shortlog',
      'rev-parse',
      'rev-list',
      'ls-files',
      'ls-tree',
      'describe',
      'cherry-pick',
      'revert',
      'remote',
      'show-ref',
      'cat-file',
      'reflog',
      'clean',
    ),
    // `--exec`/`--upload-pack`/`--receive-pack` name a program; `--ext-diff`/`--textconv` run
    // configured ones; `--output` writes a file anywhere; `--template`/`--config` bring config in.
    deniedLong: [
      'exec',
      'upload-pack',
      'receive-pack',
      'ext-diff',
      'textconv',
      'output',
      'open-files-in-pager',
      'template',
      'config',
      'exec-path',
      'git-dir',
      'work-tree',
      'recurse-submodules',
      'strategy',
      'gpg-sign',
      'sign',
    ],
    perSubcommand: {
      rebase: { deniedShort: 'xsS' },
      grep: { deniedShort: 'O' },
      merge: { deniedShort: 'sS' },
      pull: { deniedShort: 'sS' },
      commit: { deniedShort: 'S' },
      tag: { deniedShort: 'su' },
      'cherry-pick': { deniedShort: 'S' },
      revert: { deniedShort: 'S' },
    },
    // `ext::cmd`, `fd::…`, `foo::url` and `foo://` run remote helpers (`git-remote-foo`).
    deniedArgument: (word) => word.includes('::') || (word.includes('://') && !GIT_REMOTE_OK.test(word)),
  },
  npm: {
    style: 'gnu',
    singleDashLong: true,
    subcommands: set(
      'test',
      't',
      'tst',
      ...NPM_RUN,
      ...NPM_INSTALL,
      'ls',
      'list',
      'll',
      'la',
      'outdated',
      'view',
      'v',
      'info',
      'show',
      'why',
      'explain',
      'audit',
    ),
    named: set(...NPM_RUN),
    bare: set(...NPM_INSTALL, 'audit'),
    deniedLong: NPM_DENIED,
    deniedShort: 'gCc',
  },
  pnpm: {
    style: 'gnu',
    singleDashLong: true,
    subcommands: set('test', 't', 'run', 'install', 'i', 'ls', 'list', 'outdated', 'why', 'audit'),
    named: set('run'),
    bare: set('install', 'i', 'audit'),
    deniedLong: [...NPM_DENIED, 'filter', 'workspace-root'],
    deniedShort: 'gCcw',
  },
  yarn: {
    style: 'gnu',
    singleDashLong: true,
    subcommands: set('test', 'run', 'install', 'list', 'why', 'outdated'),
    named: set('run'),
    bare: set('install'),
    deniedLong: NPM_DENIED,
    deniedShort: 'g',
  },
  cargo: {
    style: 'gnu',
    subcommands: set(
      'build',
      'b',
      'check',
      'c',
      'test',
      't',
      'clippy',
      'fmt',
      'doc',
      'd',
      'tree',
      'metadata',
      'bench',
      'run',
      'r',
      'clean',
    ),
    // `--config` can set a runner or a linker; the others read or write elsewhere.
    deniedLong: ['config', 'manifest-path', 'target-dir', 'artifact-dir', 'out-dir', 'lockfile-path'],
    deniedShort: 'ZC',
  },
  go: {
    style: 'single',
    subcommands: set('build', 'test', 'vet', 'fmt', 'list', 'version', 'doc'),
    // `-exec`/`-toolexec` name a program; `-ldflags=-extld=…` too; `-overlay`/`-modfile` swap the sources.
    deniedLong: [
      'exec',
      'toolexec',
      'overlay',
      'modfile',
      'ldflags',
      'gcflags',
      'asmflags',
      'gccgoflags',
      'compiler',
      'C',
      'vettool',
      'pgo',
    ],
  },
  pytest: {
    style: 'gnu',
    deniedLong: ['config-file', 'override-ini', 'plugins', 'confcutdir', 'rootdir', 'basetemp', 'pyargs'],
    deniedShort: 'pco',
  },
  find: {
    style: 'single',
    // GNU find's `--` ends its -H/-L/-P options only: the expression after it still runs.
    dashDashKeepsOptions: true,
    deniedLong: ['exec', 'execdir', 'ok', 'okdir', 'delete', 'fprint', 'fprint0', 'fprintf', 'fls'],
  },
  // `--hostname-bin` names a program rg runs (for `--hyperlink-format`).
  rg: {
    style: 'gnu',
    deniedLong: ['pre', 'pre-glob', 'search-zip', 'hostname-bin', 'hyperlink-format'],
    deniedShort: 'z',
  },
  sort: { style: 'gnu', deniedLong: ['compress-program', 'output'], deniedShort: 'o' },
  date: { style: 'gnu', deniedLong: ['set'], deniedShort: 's' },
  tree: { style: 'gnu', deniedLong: [], deniedShort: 'o' },
  rm: { style: 'gnu', deniedLong: ['no-preserve-root'] },
  ls: READERS,
  cat: READERS,
  head: READERS,
  tail: READERS,
  wc: READERS,
  pwd: READERS,
  stat: READERS,
  file: READERS,
  du: READERS,
  df: READERS,
  diff: READERS,
  cmp: READERS,
  which: READERS,
  true: READERS,
  false: READERS,
  uname: READERS,
  whoami: READERS,
  id: READERS,
  basename: READERS,
  dirname: READERS,
  realpath: READERS,
  readlink: READERS,
  echo: READERS,
  // Not jq: `jq -n env` prints the agent's whole environment, whatever its arguments name.
  grep: READERS,
  egrep: READERS,
  fgrep: READERS,
  cut: READERS,
  nl: READERS,
  touch: READERS,
  mkdir: READERS,
  cp: READERS,
  mv: READERS,
};

/**
 * The words of a simple command, or undefined when it is more than words: shell syntax that
 * chains, redirects, substitutes, expands or globs (`; & | < > $ \` ( ) { } * ? [ ] # \`), a
 * quote left open, or any character outside printable ASCII besides space and tab (bash splits
 * words on space and tab only; a look-alike letter names another program). Single and double
 * quotes are read (their contents are literal here, as `$`, backquote and backslash are refused).
 */
export function simpleWords(command: string): string[] | undefined {
  if (/[^\x20-\x7e\t]/.test(command) || /[$`\\]/.test(command)) return undefined;
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < command.length; i += 1) {
    const char = command[i]!;
    if (char === ' ' || char === '\t') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (char === "'" || char === '"') {
      const end = command.indexOf(char, i + 1);
      if (end < 0) return undefined;
      word = (word ?? '') + command.slice(i + 1, end);
      i = end;
    } else if (/[;&|<>(){}*?[\]#!]/.test(char)) {
      return undefined;
    } else {
      word = (word ?? '') + char;
    }
  }
  if (word !== undefined) words.push(word);
  return words.length > 0 ? words : undefined;
}

/** What one Bash command may be covered as, before its paths are judged. */
export type BashReading =
  /** Covered with the same `kind`; `paths` must all be in the project. */
  | { covered: true; kind: string; paths: string[] }
  /** Only the identical command. */
  | { covered: false };

function isDenied(option: string, rule: ProgramRule, sub: string | undefined): boolean {
  const extra = sub ? rule.perSubcommand?.[sub] : undefined;
  const long = [...rule.deniedLong, ...(extra?.deniedLong ?? [])];
  const short = (rule.deniedShort ?? '') + (extra?.deniedShort ?? '');
  // npm's option parser (nopt) reads `-node-options=…` as the long option, not as letters.
  if (
    rule.singleDashLong &&
    !option.startsWith('--') &&
    option.length > 2 &&
    long.some((denied) => option.slice(1).split('=')[0]! === denied)
  )
    return true;
  if (rule.style === 'single' || option.startsWith('--')) {
    const name = option.replace(/^--?/, '').split('=')[0]!;
    if (name === '') return false;
    // GNU getopt and git's parse-options take any unambiguous prefix of a long option.
    return long.some(
      (denied) => denied === name || (rule.style === 'gnu' && option.startsWith('--') && denied.startsWith(name)),
    );
  }
  // A short cluster: `-abc`; a value may follow a letter (`-mfix`), so every letter counts.
  return [...option.slice(1)].some((letter) => short.includes(letter));
}

/**
 * Reads a command for "Allow for this run": the program, its subcommand, and the words that may
 * be paths (every argument, and an option's value after `=` or its letters).
 */
export function readBash(command: string): BashReading {
  const words = simpleWords(command);
  if (!words) return { covered: false };
  const [program, ...rest] = words as [string, ...string[]];
  const rule = Object.hasOwn(PROGRAMS, program) ? PROGRAMS[program] : undefined;
  if (!rule) return { covered: false };
  let i = 0;
  let sub: string | undefined;
  const kind = [program];
  if (rule.subcommands) {
    while (i < rest.length && rest[i]!.startsWith('-')) {
      if (!rule.globals?.has(rest[i]!)) return { covered: false };
      i += 1;
    }
    sub = rest[i];
    if (sub === undefined || !rule.subcommands.has(sub)) return { covered: false };
    kind.push(sub);
    i += 1;
    if (rule.named?.has(sub)) {
      const name = rest[i];
      if (name === undefined || name.startsWith('-')) return { covered: false };
      kind.push(name);
      i += 1;
    }
  }
  const paths: string[] = [];
  let operands = false;
  for (const word of rest.slice(i)) {
    if (!operands && word === '--') {
      if (!rule.dashDashKeepsOptions) operands = true;
      continue;
    }
    // Bash expands `~user`, `~+` and `~-` (at a word's start, and after `=` or `:`) to other
    // directories than the word says; only `~` and `~/…` are judged as the home's paths.
    if (OTHER_TILDE.test(word)) return { covered: false };
    if (!operands && word.startsWith('-') && word !== '-') {
      if (isDenied(word, rule, sub)) return { covered: false };
      // An option's value may be a path: after `=`, or after a short option's letter (`-t/etc`).
      const value = word.includes('=')
        ? word.slice(word.indexOf('=') + 1)
        : rule.style === 'gnu' && !word.startsWith('--')
          ? word.slice(2)
          : '';
      if (value !== '') paths.push(value);
      continue;
    }
    if (sub && rule.bare?.has(sub)) return { covered: false };
    if (rule.deniedArgument?.(word)) return { covered: false };
    paths.push(word);
  }
  return { covered: true, kind: kind.join(' '), paths };
}
