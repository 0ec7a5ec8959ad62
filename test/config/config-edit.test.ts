import {
  chmod,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  realpath,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approveConfig } from '../../src/config/edit/approve.js';
import { grantPath } from '../../src/config/edit/grant-path.js';
import { CONFIG_TEMPLATE, loadConfig } from '../../src/config/index.js';

const CONFIG = `# my baton
[workspace]   # where runs go
roots = ["~/code"]   # main checkout

[harness]
enabled = true                 # false removes the feature
approved = false               # one-time owner consent; "#" in a comment
default_vendor = "codex"       # "codex" | "claude"
max_active = 2

[projects]
app = "~/code/app#1"           # a "#" inside a string

[channels.telegram]
owner_user_id = "123456789"
`;

let dir: string;
let configPath: string;
let home: string;

beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-config-edit-')));
  configPath = path.join(dir, 'config.toml');
  home = path.join(dir, 'home');
  await mkdir(home);
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Lines of `after` that differ from `before`, which must have the same line count. */
function changedLines(before: string, after: string): { line: number; before: string; after: string }[] {
  const a = before.split('\n');
  const b = after.split('\n');
  expect(b).toHaveLength(a.length);
  return a.flatMap((text, i) => (text === b[i] ? [] : [{ line: i + 1, before: text, after: b[i] ?? '' }]));
}

async function entries(): Promise<string[]> {
  return (await readdir(dir)).sort();
}

describe('approveConfig', () => {
  it('changes only the value of approved, keeping its comment and every other byte', async () => {
    await writeFile(configPath, CONFIG);
    const result = await approveConfig(configPath);
    const after = await readFile(configPath, 'utf8');
    expect(result.changed).toBe(true);
    expect(changedLines(CONFIG, after)).toEqual([
      {
        line: 7,
        before: 'approved = false               # one-time owner consent; "#" in a comment',
        after: 'approved = true               # one-time owner consent; "#" in a comment',
      },
    ]);
    expect(result.diff).toContain('-approved = false');
    expect(result.diff).toContain('+approved = true');
    const { config } = await loadConfig({ configPath, homeDir: home });
    expect(config.harness.approved).toBe(true);
    expect(config.projects.get('app')).toBe(path.join(home, 'code/app#1'));
  });

  it('keeps CRLF line endings, a BOM, and a header written with spaces', async () => {
    const text = '\uFEFF# crlf\r\n[ harness ]  # consent\r\n  enabled = true\r\n\r\n[workspace]\r\nroots = []\r\n';
    await writeFile(configPath, text);
    await approveConfig(configPath);
    expect(await readFile(configPath, 'utf8')).toBe(
      '\uFEFF# crlf\r\n[ harness ]  # consent\r\n  approved = true\r\n  enabled = true\r\n\r\n[workspace]\r\nroots = []\r\n',
    );
  });

  it('is not fooled by table-like lines inside multi-line strings', async () => {
    const text = `[projects]\nodd = """\n[harness]\napproved = false\\"""""\nlit = '''\n[harness] # '''\n`;
    await writeFile(configPath, text);
    await approveConfig(configPath);
    expect(await readFile(configPath, 'utf8')).toBe(`${text}\n[harness]\napproved = true\n`);
  });

  it('inserts approved = true right after the [harness] header when the key is absent', async () => {
    const text = '[harness]\n# the vendor\ndefault_vendor = "claude"\n\n[workspace]\nroots = []\n';
    await writeFile(configPath, text);
    await approveConfig(configPath);
    expect(await readFile(configPath, 'utf8')).toBe(
      '[harness]\napproved = true\n# the vendor\ndefault_vendor = "claude"\n\n[workspace]\nroots = []\n',
    );
  });

  it('appends a [harness] table when there is none', async () => {
    const text = '# nothing else\n[workspace]\nroots = []';
    await writeFile(configPath, text);
    const result = await approveConfig(configPath);
    expect(await readFile(configPath, 'utf8')).toBe(`${text}\n\n[harness]\napproved = true\n`);
    expect(result.diff).toMatch(/^\+\[harness\]$/m);
  });

  it('writes the starter template with mode 0600 when the file is missing, then approves it', async () => {
    const nested = path.join(dir, 'fresh', 'config.toml');
    const result = await approveConfig(nested);
    expect(result.changed).toBe(true);
    const after = await readFile(nested, 'utf8');
    expect(changedLines(CONFIG_TEMPLATE, after)).toEqual([
      expect.objectContaining({ before: 'approved = false', after: 'approved = true' }),
    ]);
    expect((await stat(nested)).mode & 0o777).toBe(0o600);
  });

  it('is idempotent: an approved file is not written again', async () => {
    await writeFile(configPath, CONFIG);
    await approveConfig(configPath);
    const once = await readFile(configPath, 'utf8');
    const mtime = (await stat(configPath)).mtimeMs;
    await expect(approveConfig(configPath)).resolves.toEqual({ changed: false, diff: '' });
    expect(await readFile(configPath, 'utf8')).toBe(once);
    expect((await stat(configPath)).mtimeMs).toBe(mtime);
  });

  it('keeps the file mode and edits the target of a symlinked config', async () => {
    const target = path.join(dir, 'real.toml');
    await writeFile(target, CONFIG);
    await chmod(target, 0o640);
    await symlink(target, configPath);
    await approveConfig(configPath);
    expect((await lstat(configPath)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toContain('approved = true               #');
    expect((await stat(target)).mode & 0o777).toBe(0o640);
  });

  it.each([
    ['an inline table', 'harness = { approved = false }\n'],
    ['a dotted key', 'harness.approved = false\n[workspace]\nroots = []\n'],
    ['a dotted key inside [harness]', '[harness]\napproved.really = false\n'],
    ['an unknown key (does not validate)', '[harness]\napproved = false\nbogus = 1\n'],
    ['a TOML syntax error', '[harness]\napproved = = false\n'],
  ])('refuses %s with config_invalid and leaves the file untouched', async (_name, text) => {
    await writeFile(configPath, text);
    const before = await entries();
    await expect(approveConfig(configPath)).rejects.toMatchObject({ code: 'config_invalid' });
    expect(await readFile(configPath, 'utf8')).toBe(text);
    expect(await entries()).toEqual(before);
  });

  it('says to set the key by hand when it cannot edit', async () => {
    await writeFile(configPath, 'harness = { approved = false }\n');
    await expect(approveConfig(configPath)).rejects.toThrow(/automatically.*set \[harness\] approved = true by hand/);
  });
});

describe('grantPath', () => {
  let granted: string;
  beforeEach(async () => {
    granted = path.join(dir, 'repo');
    await mkdir(granted);
  });

  async function grant(text: string | undefined, target = granted) {
    if (text !== undefined) await writeFile(configPath, text);
    const result = await grantPath(configPath, target, { homeDir: home, cwd: dir });
    return { result, after: await readFile(configPath, 'utf8') };
  }

  it.each([
    [
      'an empty array',
      '[workspace]\nroots = []   # none yet\n',
      (r: string) => `[workspace]\nroots = ["${r}"]  # none yet\n`,
    ],
    [
      'an empty array with a comment aligned far out',
      '[workspace]\nroots = []                                                  # none yet\n',
      (r: string) => `[workspace]\nroots = ["${r}"]${' '.repeat(50 - r.length - 2)}# none yet\n`,
    ],
    [
      'a one-line array',
      '[workspace]\nroots = ["~/code"]\n',
      (r: string) => `[workspace]\nroots = ["~/code", "${r}"]\n`,
    ],
    [
      'a multi-line array without a trailing comma',
      '[workspace]\nroots = [\n    "~/code",  # main\n    "~/work"   # other\n]\ndefault = "~/code"\n',
      (r: string) =>
        `[workspace]\nroots = [\n    "~/code",  # main\n    "~/work",   # other\n    "${r}"\n]\ndefault = "~/code"\n`,
    ],
    [
      'a multi-line array with a trailing comma',
      '[workspace]\nroots = [\n  "~/code",\n]\n',
      (r: string) => `[workspace]\nroots = [\n  "~/code",\n  "${r}",\n]\n`,
    ],
    [
      'a multi-line empty array',
      '[workspace]\nroots = [\n  # none\n]\n',
      (r: string) => `[workspace]\nroots = [\n  # none\n  "${r}"\n]\n`,
    ],
    [
      'an absent key',
      '[workspace]\ndefault = "~/code"\n',
      (r: string) => `[workspace]\nroots = ["${r}"]\ndefault = "~/code"\n`,
    ],
    [
      'an absent table',
      '[harness]\napproved = true\n',
      (r: string) => `[harness]\napproved = true\n\n[workspace]\nroots = ["${r}"]\n`,
    ],
  ])('appends to %s', async (_name, text, expected) => {
    const { result, after } = await grant(text);
    expect(result).toMatchObject({ changed: true, root: granted });
    expect(after).toBe(expected(granted));
    const { config } = await loadConfig({ configPath, homeDir: home });
    expect(config.workspace.roots).toContain(granted);
  });

  it('writes the template first when the file is missing', async () => {
    const { result, after } = await grant(undefined);
    expect(result.changed).toBe(true);
    expect(changedLines(CONFIG_TEMPLATE, after)).toEqual([
      expect.objectContaining({
        before: expect.stringMatching(/^roots = \[\] +# for example/),
        after: `roots = ["${granted}"]  # for example: roots = ["~/code"]`,
      }),
    ]);
  });

  it('does not add a directory twice, comparing real paths', async () => {
    await symlink(granted, path.join(home, 'link'));
    const text = '[workspace]\nroots = ["~/link"]\n';
    const { result, after } = await grant(text, path.join('repo', '.'));
    expect(result).toEqual({ changed: false, diff: '', root: granted });
    expect(after).toBe(text);
  });

  it('grants the real path of a symlink', async () => {
    const link = path.join(dir, 'link-to-repo');
    await symlink(granted, link);
    const { result, after } = await grant('[workspace]\nroots = []\n', link);
    expect(result.root).toBe(granted);
    expect(after).toBe(`[workspace]\nroots = ["${granted}"]\n`);
  });

  it.each([
    ['a directory that does not exist', 'missing'],
    ['a file', 'config.toml'],
  ])('refuses %s with cwd_missing and leaves the file untouched', async (_name, target) => {
    const text = '[workspace]\nroots = []\n';
    await writeFile(configPath, text);
    await expect(grantPath(configPath, target, { homeDir: home, cwd: dir })).rejects.toMatchObject({
      code: 'cwd_missing',
    });
    expect(await readFile(configPath, 'utf8')).toBe(text);
  });

  it('refuses workspace written as an inline table', async () => {
    const text = 'workspace = { roots = [] }\n';
    await writeFile(configPath, text);
    await expect(grant(undefined)).rejects.toMatchObject({ code: 'config_invalid' });
    expect(await readFile(configPath, 'utf8')).toBe(text);
  });

  it('escapes a quote and a backslash in the path', async () => {
    const odd = path.join(dir, 'we"ird\\dir');
    await mkdir(odd);
    await grant('[workspace]\nroots = []\n', odd);
    const { config } = await loadConfig({ configPath, homeDir: home });
    expect(config.workspace.roots).toEqual([odd]);
  });
});

describe('starter config header', () => {
  it('says which keys apply without a restart (src/config/live.ts LIVE_KEYS)', () => {
    const header = CONFIG_TEMPLATE.split('\n').slice(0, 3).join('\n');
    expect(header).not.toContain('Read once at start');
    expect(header).toContain('[harness] approved');
    expect(header).toContain('[workspace] roots');
    expect(header).toContain('apply on the next command');
  });
});
