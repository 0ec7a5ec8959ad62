import { execFileSync } from 'node:child_process';
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callbackData, parseCallbackData } from '../../src/channels/telegram/adapter.js';
import { parseCommand } from '../../src/dispatch/command.js';
import { approvalScope } from '../../src/harness/approval-scope.js';
import {
  approvalButtons,
  describeKind,
  describeToolCall,
  MAX_APPROVAL_INPUT_CHARS,
  revealToolCall,
} from '../../src/harness/approvals.js';
import { hiddenWarning } from '../../src/harness/reveal-text.js';
import { approvalWords } from '../../src/wording/approvals.js';

const here = mkdtempSync(join(realpathSync(tmpdir()), 'baton-kinds-'));
const project = join(here, 'home', 'code', 'app');
const home = join(here, 'home');
const batonHome = join(home, '.baton');
mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
mkdirSync(batonHome, { recursive: true });
mkdirSync(join(here, 'elsewhere'), { recursive: true });
symlinkSync(join(here, 'elsewhere'), join(project, 'out'));
symlinkSync('../../../../elsewhere/nothing-yet', join(project, 'dangling'));
writeFileSync(join(here, 'elsewhere', 'target'), 'x');
linkSync(join(here, 'elsewhere', 'target'), join(project, 'hardlinked'));
afterAll(() => rmSync(here, { recursive: true, force: true }));
const scope = { cwd: project, homeDir: home, protectedDirs: [batonHome, join(home, '.codex'), join(home, '.claude')] };
const kindOf = async (tool: string, input: Record<string, unknown>): Promise<string> =>
  (await approvalScope(tool, input, scope)).kind;

describe('what "Allow for this run" covers (approvalScope): Bash', () => {
  // [command, kind]: `Bash:…` is covered by a rule of the same kind; `Bash=…` only by the identical command.
  const table: [string, string][] = [
    ['git tag v1', 'Bash:git tag'],
    ['git tag v2 -m "release two"', 'Bash:git tag'],
    ['git --no-pager log --oneline -5', 'Bash:git log'],
    ['git status', 'Bash:git status'],
    ['npm test -- --run', 'Bash:npm test'],
    ['  npm install', 'Bash:npm install'],
    ['npm run build', 'Bash:npm run build'],
    ['npm\ttest', 'Bash:npm test'],
    ['ls -la src', 'Bash:ls'],
    ['touch first.txt', 'Bash:touch'],
    ['find . -name "*.ts"', 'Bash:find'],
    ['go test ./...', 'Bash:go test'],
    ['cargo test --release', 'Bash:cargo test'],
    // git options and aliases that name code to run
    ["git -c 'alias.x=!touch pwned' x", "Bash=git -c 'alias.x=!touch pwned' x"],
    ['git -c core.fsmonitor="touch pwned" status', 'Bash=git -c core.fsmonitor="touch pwned" status'],
    ['git -C /tmp/other status', 'Bash=git -C /tmp/other status'],
    ['git --git-dir=/tmp/x/.git log', 'Bash=git --git-dir=/tmp/x/.git log'],
    ['git config core.hooksPath /tmp/h', 'Bash=git config core.hooksPath /tmp/h'],
    ['git x', 'Bash=git x'],
    ['git fetch --upload-pack="touch pwned" origin', 'Bash=git fetch --upload-pack="touch pwned" origin'],
    ['git fetch --upload-p=evil origin', 'Bash=git fetch --upload-p=evil origin'],
    ['git push --receive-pack=evil origin', 'Bash=git push --receive-pack=evil origin'],
    ['git rebase -x "touch pwned" main', 'Bash=git rebase -x "touch pwned" main'],
    ['git rebase -ix evil main', 'Bash=git rebase -ix evil main'],
    ['git rebase --exec=evil main', 'Bash=git rebase --exec=evil main'],
    ['git grep -O"touch pwned" foo', 'Bash=git grep -O"touch pwned" foo'],
    ['git diff --ext-diff', 'Bash=git diff --ext-diff'],
    ['git log --output=/tmp/x', 'Bash=git log --output=/tmp/x'],
    ['git fetch "ext::sh -c touch% pwned"', 'Bash=git fetch "ext::sh -c touch% pwned"'],
    ['git merge -s evil main', 'Bash=git merge -s evil main'],
    ['git submodule foreach touch pwned', 'Bash=git submodule foreach touch pwned'],
    // other programs' options and arguments that name code to run
    ['npm exec evil', 'Bash=npm exec evil'],
    ['npx evil', 'Bash=npx evil'],
    ['npm install left-pad', 'Bash=npm install left-pad'],
    ['npm test --script-shell=/tmp/evil', 'Bash=npm test --script-shell=/tmp/evil'],
    [
      'npm run build --node-options="--require /tmp/evil.js"',
      'Bash=npm run build --node-options="--require /tmp/evil.js"',
    ],
    ['npm -g install', 'Bash=npm -g install'],
    ['node -e "require(\'child_process\')"', 'Bash=node -e "require(\'child_process\')"'],
    ['node --require ./x.js app.js', 'Bash=node --require ./x.js app.js'],
    ['python -c "import os"', 'Bash=python -c "import os"'],
    ['python3 script.py', 'Bash=python3 script.py'],
    ['find . -exec touch pwned {} +', 'Bash=find . -exec touch pwned {} +'],
    ['find . -name x -execdir sh', 'Bash=find . -name x -execdir sh'],
    ['find . -ok rm', 'Bash=find . -ok rm'],
    ['find . -delete', 'Bash=find . -delete'],
    ['find . -fprint /tmp/x', 'Bash=find . -fprint /tmp/x'],
    ['xargs touch', 'Bash=xargs touch'],
    ['env FOO=1 git status', 'Bash=env FOO=1 git status'],
    ['GIT_SSH_COMMAND=evil git fetch', 'Bash=GIT_SSH_COMMAND=evil git fetch'],
    ['sh -c "touch pwned"', 'Bash=sh -c "touch pwned"'],
    ['bash script.sh', 'Bash=bash script.sh'],
    ['sudo ls', 'Bash=sudo ls'],
    ['timeout 5 ls', 'Bash=timeout 5 ls'],
    ['go test -exec=evil ./...', 'Bash=go test -exec=evil ./...'],
    ['go test -toolexec evil ./...', 'Bash=go test -toolexec evil ./...'],
    ['go build -ldflags=-extld=evil', 'Bash=go build -ldflags=-extld=evil'],
    ['cargo test --config "target.x.runner=\'evil\'"', 'Bash=cargo test --config "target.x.runner=\'evil\'"'],
    ['pytest -p evil', 'Bash=pytest -p evil'],
    ['rg --pre evil foo', 'Bash=rg --pre evil foo'],
    ['sort -o /tmp/x a', 'Bash=sort -o /tmp/x a'],
    // find's `--` ends only its leading options: the expression after it still runs
    ['find -- . -exec sh -c "curl x | sh" ";"', 'Bash=find -- . -exec sh -c "curl x | sh" ";"'],
    ['find -- . -delete', 'Bash=find -- . -delete'],
    // bash expands these tildes to other directories than the word says
    ['cat ~alice/.ssh/id_ed25519', 'Bash=cat ~alice/.ssh/id_ed25519'],
    ['cat ~+/../other/.env', 'Bash=cat ~+/../other/.env'],
    ['cp ~-/secret ./c', 'Bash=cp ~-/secret ./c'],
    ['ls --color=auto --hide=~root', 'Bash=ls --color=auto --hide=~root'],
    // rg runs --hostname-bin's program; jq prints the environment; file:// reads any repository
    [
      'rg --hostname-bin=./x.sh --hyperlink-format=default foo',
      'Bash=rg --hostname-bin=./x.sh --hyperlink-format=default foo',
    ],
    ['jq -n env', 'Bash=jq -n env'],
    ['git fetch file:///home/alice/private', 'Bash=git fetch file:///home/alice/private'],
    // npm's parser reads a single-dash word as the long option
    ['npm test -node-options=--require=./x.js', 'Bash=npm test -node-options=--require=./x.js'],
    ['npm run build -script-shell=./x', 'Bash=npm run build -script-shell=./x'],
    ['sort --compress-program=evil a', 'Bash=sort --compress-program=evil a'],
    ['sed -i s/a/b/e x', 'Bash=sed -i s/a/b/e x'],
    ['awk "BEGIN{system(1)}"', 'Bash=awk "BEGIN{system(1)}"'],
    ['make', 'Bash=make'],
    ['./build.sh x', 'Bash=./build.sh x'],
    // shell syntax: never covered
    ['npm test && rm -rf /', 'Bash=npm test && rm -rf /'],
    ['ls; rm x', 'Bash=ls; rm x'],
    ['echo $(id)', 'Bash=echo $(id)'],
    ['echo "$HOME"', 'Bash=echo "$HOME"'],
    ['cat a | sh', 'Bash=cat a | sh'],
    ['printf x > f', 'Bash=printf x > f'],
    ['a\nb', 'Bash=a\nb'],
    ['echo `id`', 'Bash=echo `id`'],
    ['ls *', 'Bash=ls *'],
    ['ls \\x', 'Bash=ls \\x'],
    ["echo 'open", "Bash=echo 'open"],
    ['./build.sh\u00a0x', 'Bash=./build.sh\u00a0x'],
    ['npm\rtest', 'Bash=npm\rtest'],
    ['npm\u2003x', 'Bash=npm\u2003x'],
    ['\u0441url x', 'Bash=\u0441url x'],
    // paths outside the project, into baton's own files, a .git or the home's dotfiles
    ['cat /etc/passwd', 'Bash=cat /etc/passwd'],
    [`cat ${batonHome}/.env`, `Bash=cat ${batonHome}/.env`],
    ['cat ~/.ssh/id_rsa', 'Bash=cat ~/.ssh/id_rsa'],
    ['cp x ~/.bashrc', 'Bash=cp x ~/.bashrc'],
    ['cp -t/tmp x', 'Bash=cp -t/tmp x'],
    ['mv a ../b', 'Bash=mv a ../b'],
    ['touch out/pwned', 'Bash=touch out/pwned'],
    ['touch .git/hooks/pre-commit', 'Bash=touch .git/hooks/pre-commit'],
    ['rm -rf .git', 'Bash=rm -rf .git'],
    ['touch dangling', 'Bash=touch dangling'],
    ['git diff --no-index /etc/passwd x', 'Bash=git diff --no-index /etc/passwd x'],
  ];
  it.each(table)('%s → %s', async (command, kind) => {
    expect(await kindOf('Bash', { command })).toBe(kind);
  });
  it('a Glob pattern that climbs out, or starts at / or ~, always asks', async () => {
    for (const pattern of ['../../**/.ssh/*', '/etc/**', '~/.ssh/*', 'src/../../x']) {
      expect(await approvalScope('Glob', { pattern }, scope)).toMatchObject({
        kind: expect.stringMatching(/^ask!/),
        mark: 'outside the project',
      });
    }
    expect(await approvalScope('Glob', { pattern: 'src/**/*.ts' }, scope)).toEqual({ kind: 'Glob:.' });
  });

  it('says what a kind covers', () => {
    expect(describeKind('Bash:npm test')).toBe(
      'every `npm test …` command that names no other code to run and no path outside the project',
    );
    expect(describeKind('Bash=ls; rm x')).toBe('this exact command');
  });
});

describe('what "Allow for this run" covers (approvalScope): files', () => {
  // [tool, path, kind or the mark of a call that always asks]
  const table: [string, string, string][] = [
    ['Write', join(project, 'a.txt'), 'Write:.'],
    ['Edit', join(project, 'src', 'deep', 'b.ts'), 'Edit:.'],
    ['Write', 'relative.txt', 'Write:.'],
    ['Write', `${project}/sub/../c.txt`, 'Write:.'],
    ['Write', join(batonHome, '.env'), "baton's own files"],
    ['Write', join(home, '.claude', 'settings.json'), "baton's own files"],
    ['Write', join(home, '.codex', 'config.toml'), "baton's own files"],
    ['Write', join(here, 'elsewhere', 'x'), 'outside the project'],
    ['Write', '/etc/cron.d/x', 'outside the project'],
    ['Write', `${project}/../sibling.txt`, 'outside the project'],
    ['Write', join(project, 'out', 'x'), 'outside the project'],
    ['Write', `${project}/out/../y`, 'outside the project'],
    ['Write', join(project, 'dangling'), 'outside the project'],
    ['Write', join(home, '.bashrc'), 'outside the project'],
    ['Write', join(home, '.ssh', 'authorized_keys'), 'outside the project'],
    ['Write', '~/.profile', 'outside the project'],
    ['Write', join(project, '.git', 'hooks', 'pre-commit'), "git's hooks and config"],
    ['Edit', join(project, '.git', 'config'), "git's hooks and config"],
    ['Write', join(project, 'vendor', 'lib', '.git'), "git's hooks and config"],
    ['Write', join(project, 'hardlinked'), 'a file linked from elsewhere'],
    ['Read', join(batonHome, '.env'), "baton's own files"],
    ['Grep', join(project, 'src'), 'Grep:.'],
  ];
  it.each(table)('%s %s → %s', async (tool, path, expected) => {
    const field = tool === 'Grep' ? 'path' : 'file_path';
    const got = await approvalScope(tool, { [field]: path, content: 'x' }, scope);
    if (expected.includes(':.')) expect(got).toEqual({ kind: expected });
    else expect(got).toMatchObject({ kind: expect.stringMatching(/^ask!/), mark: expected });
  });
  it("the home's dotfiles ask even when the run's directory is the home", async () => {
    const atHome = { ...scope, cwd: home };
    expect(await approvalScope('Write', { file_path: join(home, 'notes.txt') }, atHome)).toEqual({ kind: 'Write:.' });
    expect(await approvalScope('Write', { file_path: join(home, '.bashrc') }, atHome)).toMatchObject({
      mark: 'settings in your home',
    });
    expect(await approvalScope('Write', { file_path: join(batonHome, '.env') }, atHome)).toMatchObject({
      mark: "baton's own files",
    });
  });
  it('a run whose worktree lives under $BATON_HOME may write its own files, nothing else there', async () => {
    const worktree = join(batonHome, 'worktrees', 'app-1');
    mkdirSync(worktree, { recursive: true });
    const inWorktree = { ...scope, cwd: worktree };
    expect(await approvalScope('Write', { file_path: join(worktree, 'a.txt') }, inWorktree)).toEqual({
      kind: 'Write:.',
    });
    expect(await approvalScope('Write', { file_path: join(batonHome, '.env') }, inWorktree)).toMatchObject({
      mark: "baton's own files",
    });
  });
  it('a hooks directory the repository names (core.hooksPath, as husky sets it) asks like .git/hooks, read from git each time', async () => {
    const repo = join(here, 'husky-app');
    mkdirSync(join(repo, 'packages', 'web'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    const inRepo = { ...scope, cwd: repo };
    // Not set yet: an ordinary in-project write.
    expect(await approvalScope('Write', { file_path: join(repo, '.husky', 'pre-commit') }, inRepo)).toEqual({
      kind: 'Write:.',
    });
    execFileSync('git', ['-C', repo, 'config', 'core.hooksPath', '.husky']);
    for (const path of [join(repo, '.husky', 'pre-commit'), '.husky/pre-commit', join(repo, '.husky', '_', 'h')]) {
      expect(await approvalScope('Write', { file_path: path }, inRepo)).toMatchObject({
        kind: expect.stringMatching(/^ask!Write:/),
        mark: "git's hooks and config",
      });
    }
    expect(await approvalScope('Edit', { file_path: join(repo, '.husky', 'pre-commit') }, inRepo)).toMatchObject({
      mark: "git's hooks and config",
    });
    expect(await approvalScope('Write', { file_path: join(repo, 'husky.txt') }, inRepo)).toEqual({ kind: 'Write:.' });
    // Relative to the worktree's top, not to the run's directory below it.
    execFileSync('git', ['-C', repo, 'config', 'core.hooksPath', 'packages/web/hooks']);
    const inPackage = { ...scope, cwd: join(repo, 'packages', 'web') };
    expect(await approvalScope('Write', { file_path: 'hooks/pre-push' }, inPackage)).toMatchObject({
      mark: "git's hooks and config",
    });
    expect(await approvalScope('Write', { file_path: 'src/app.ts' }, inPackage)).toEqual({ kind: 'Write:.' });
  });
  it('any other tool: the same tool', async () => {
    expect(await kindOf('mcp__srv__tool', {})).toBe('mcp__srv__tool');
    expect(describeKind('Write:.')).toBe("every Write inside the run's directory (not .git, not baton's own files)");
  });
});

describe('hidden characters on the card', () => {
  it('escapes controls, zero-width, bidi and look-alike letters, and names them', () => {
    const revealed = revealToolCall('Bash', { command: 'echo ok\u202e\u200b\u0007 \u0441url' });
    expect(revealed.text).toBe('$ echo ok\\u{202E}\\u{200B}\\u{7} \\u{441}url');
    expect(hiddenWarning(revealed.found)).toMatch(
      /^⚠ This call holds control characters, hidden .*, bidirectional .*, non-ASCII or look-alike letters/,
    );
  });
  it('file contents keep prose in one script, and escape a Latin word with a Cyrillic letter', () => {
    const revealed = revealToolCall('Write', { file_path: '/r/a.md', content: 'café привет\n\u0441url' });
    expect(revealed.text).toBe('/r/a.md\n+ café привет\n+ \\u{441}url');
  });
  it('plain text is left alone', () => {
    const revealed = revealToolCall('Bash', { command: 'git tag v1' });
    expect(revealed).toEqual({ text: '$ git tag v1', found: new Set() });
  });
});

describe('the tool call as the owner reads it', () => {
  it('Bash: the command line; Edit: the path and a diff; Write: the path and the new lines', () => {
    expect(describeToolCall('Bash', { command: 'git push --force' }, approvalWords)).toBe('$ git push --force');
    expect(describeToolCall('Edit', { file_path: '/r/a.ts', old_string: 'a\nb', new_string: 'c' }, approvalWords)).toBe(
      '/r/a.ts\n- a\n- b\n+ c',
    );
    expect(describeToolCall('Write', { file_path: '/r/n.md', content: 'x\ny' }, approvalWords)).toBe(
      '/r/n.md\n+ x\n+ y',
    );
  });
  it('cuts a long input with a note', () => {
    const text = describeToolCall('Bash', { command: 'x'.repeat(10_000) }, approvalWords);
    expect(text.length).toBeLessThan(MAX_APPROVAL_INPUT_CHARS + 100);
    expect(text).toMatch(/… \(\d+ more characters; \/runs shows the request\)$/);
  });
});

describe('buttons on Telegram', () => {
  it('callback_data round-trips and stays within 64 bytes for baton ids', () => {
    for (const button of [
      ...approvalButtons(approvalWords.buttons, 9_007_199_254_740_991),
      { action: 'extend', arg: 'hr_0123456789ab' },
    ]) {
      const data = callbackData(button.action, button.arg);
      expect(Buffer.byteLength(data)).toBeLessThanOrEqual(64);
      expect(parseCallbackData(data)).toEqual({ action: button.action, arg: button.arg });
    }
  });
  it('refuses callback_data over 64 bytes as malformed', () => {
    expect(() => callbackData('redeliver', '9'.repeat(60))).toThrow(expect.objectContaining({ kind: 'malformed' }));
  });
});

describe('commands', () => {
  it('approve is a launch option of both vendors (codex asks through its app-server)', () => {
    expect(parseCommand('/claude approve progress fix it')).toMatchObject({
      options: { approve: true, progress: true },
      task: 'fix it',
    });
    expect(parseCommand('/codex approve fix it')).toMatchObject({ options: { approve: true }, task: 'fix it' });
  });
  it('/redeliver takes a dead letter number, with or without #', () => {
    expect(parseCommand('/redeliver #42')).toEqual({ kind: 'redeliver', deliveryId: '42' });
    expect(() => parseCommand('/redeliver')).toThrow(/needs a dead letter/);
  });
});
