/** What "Allow for this run" covers of codex's patches and permission requests (approval-scope.ts). */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { approvalScope, describeKind } from '../../src/harness/approval-scope.js';

const here = mkdtempSync(join(realpathSync(tmpdir()), 'baton-patch-kinds-'));
const home = join(here, 'home');
const project = join(home, 'code', 'app');
const batonHome = join(home, '.baton');
mkdirSync(join(project, '.git', 'hooks'), { recursive: true });
mkdirSync(batonHome, { recursive: true });
afterAll(() => rmSync(here, { recursive: true, force: true }));
const scope = { cwd: project, homeDir: home, protectedDirs: [batonHome] };
const patch = (...paths: string[]) => ({ changes: paths.map((path) => ({ path, kind: 'update', diff: '+x' })) });

describe('ApplyPatch (a codex patch)', () => {
  it('is covered by ApplyPatch:. when every path is inside the run directory', async () => {
    const kind = (await approvalScope('ApplyPatch', patch(join(project, 'a.ts'), 'src/b.ts'), scope)).kind;
    expect(kind).toBe('ApplyPatch:.');
    expect(describeKind(kind)).toBe("every ApplyPatch inside the run's directory (not .git, not baton's own files)");
  });
  it.each([
    ['a path outside the project', [join(here, 'elsewhere.txt')], 'outside the project'],
    ["git's hooks", [join(project, 'ok.ts'), join(project, '.git', 'hooks', 'pre-commit')], "git's hooks and config"],
    ["baton's own files", [join(batonHome, '.env')], "baton's own files"],
    ['a dotfile of the home', [join(home, '.bashrc')], 'outside the project'],
  ])('always asks for %s', async (_what, paths, mark) => {
    expect(await approvalScope('ApplyPatch', patch(...paths), scope)).toMatchObject({
      kind: expect.stringMatching(/^ask!ApplyPatch:/),
      mark,
    });
  });
  it('always asks for a move whose destination is marked, though the file it leaves is inside', async () => {
    const move = (to: string) => ({
      changes: [{ path: join(project, 'a.ts'), kind: 'update', movePath: to, diff: '+x' }],
    });
    expect(await approvalScope('ApplyPatch', move(join(project, '.git', 'hooks', 'pre-commit')), scope)).toMatchObject({
      kind: expect.stringMatching(/^ask!ApplyPatch:/),
      mark: "git's hooks and config",
    });
    expect((await approvalScope('ApplyPatch', move(join(home, '.bashrc')), scope)).kind).toMatch(/^ask!ApplyPatch:/);
    expect((await approvalScope('ApplyPatch', move(join(project, 'b.ts')), scope)).kind).toBe('ApplyPatch:.');
  });
  it('always asks for a patch without paths, or one asking for write access under another root', async () => {
    expect((await approvalScope('ApplyPatch', { changes: [] }, scope)).kind).toBe('ask!ApplyPatch');
    expect((await approvalScope('ApplyPatch', { ...patch('a.ts'), grantRoot: '/' }, scope)).kind).toBe(
      'ask!ApplyPatch:/',
    );
    expect((await approvalScope('ApplyPatch', patch('a\u0007.ts'), scope)).kind).toBe('ask!ApplyPatch');
  });
});

it('a codex Permissions request always asks', async () => {
  expect((await approvalScope('Permissions', { permissions: { network: { enabled: true } } }, scope)).kind).toBe(
    'ask!Permissions',
  );
});
