/**
 * The programs an "Allow for this run" of a Bash command can cover, and per program what is read
 * as its subcommand and which options or arguments name code to run or a place outside the
 * project (see `approval-bash.ts`).
 */

/** How one known program is read. */
export interface ProgramRule {
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

/** The programs baton knows, by the name a command starts with; any other covers only the identical command. */
export const PROGRAMS: Readonly<Record<string, ProgramRule>> = {
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
