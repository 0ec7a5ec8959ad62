/** codex app-server approval requests as baton's tool approvals, and the answers codex gets. */
import { describe, expect, it } from 'vitest';
import { alwaysAsks, approvalScope } from '../../../../src/harness/approval-scope.js';
import { approvalAnswer, approvalAsk } from '../../../../src/harness/vendors/codex-app-server/approvals.js';

const cwd = '/srv/app';
const command = (params: Record<string, unknown>) => ({
  id: 7,
  method: 'item/commandExecution/requestApproval',
  params: { kind: 'command', itemId: 'call_1', threadId: 't', turnId: 'u', ...params },
});

describe('approvalAsk', () => {
  it('a command is Bash without codex’s shell wrapper, with a cd when it runs elsewhere', () => {
    expect(approvalAsk(command({ command: "/bin/bash -lc 'touch a.txt'", cwd }), new Map(), cwd)).toEqual({
      requestId: 'call_1#7',
      tool: 'Bash',
      input: { command: 'touch a.txt' },
    });
    expect(
      approvalAsk(command({ command: "/bin/bash -lc 'rm -rf x'", cwd: '/home/me' }), new Map(), cwd).input,
    ).toEqual({ command: 'cd /home/me && rm -rf x' });
  });
  it('input to a running terminal always asks, as Permissions', () => {
    expect(approvalAsk(command({ kind: 'writeStdin', command: 'y' }), new Map(), cwd).tool).toBe('Permissions');
  });
  it('a network prompt on a command the run allowed still asks: the rule covers the command, not a host', async () => {
    const scope = { cwd, homeDir: '/home/me', protectedDirs: ['/var/baton'] };
    const plain = approvalAsk(command({ command: "/bin/bash -lc 'git status'", cwd }), new Map(), cwd);
    expect(alwaysAsks((await approvalScope(plain.tool, plain.input as Record<string, unknown>, scope)).kind)).toBe(
      false,
    );
    const network = approvalAsk(
      command({
        command: "/bin/bash -lc 'git status'",
        cwd,
        networkApprovalContext: { host: 'evil.example', protocol: 'https' },
      }),
      new Map(),
      cwd,
    );
    expect(network.tool).toBe('Permissions');
    expect(alwaysAsks((await approvalScope(network.tool, network.input as Record<string, unknown>, scope)).kind)).toBe(
      true,
    );
  });
  it('a command request naming no command always asks', () => {
    expect(approvalAsk(command({ cwd }), new Map(), cwd).tool).toBe('Permissions');
  });
  it('a patch that moves a file carries the destination', () => {
    const patches = new Map([
      [
        'p2',
        [{ path: '/srv/app/a.ts', kind: { type: 'update' as const, move_path: '/srv/app/.git/hooks/x' }, diff: '' }],
      ],
    ]);
    const ask = approvalAsk(
      { id: 3, method: 'item/fileChange/requestApproval', params: { itemId: 'p2' } },
      patches,
      cwd,
    );
    expect(ask.input).toEqual({
      changes: [{ path: '/srv/app/a.ts', kind: 'update', movePath: '/srv/app/.git/hooks/x', diff: '' }],
    });
  });
  it('a patch carries the paths, kinds and diffs codex announced for its item', () => {
    const patches = new Map([['p1', [{ path: '/srv/app/a.ts', kind: { type: 'add' as const }, diff: '+a' }]]]);
    const ask = approvalAsk(
      { id: 'x', method: 'item/fileChange/requestApproval', params: { itemId: 'p1', grantRoot: '/' } },
      patches,
      cwd,
    );
    expect(ask).toEqual({
      requestId: 'p1#x',
      tool: 'ApplyPatch',
      input: { changes: [{ path: '/srv/app/a.ts', kind: 'add', diff: '+a' }], grantRoot: '/' },
    });
  });
});

describe('approvalAnswer', () => {
  it('answers accept or decline, never acceptForSession', () => {
    expect(approvalAnswer(command({}), true)).toEqual({ decision: 'accept' });
    expect(approvalAnswer(command({}), false)).toEqual({ decision: 'decline' });
    const patch = { id: 1, method: 'item/fileChange/requestApproval', params: {} };
    expect(approvalAnswer(patch, true)).toEqual({ decision: 'accept' });
  });
  it('grants what a permissions request asked for, for the turn only; a denial grants nothing', () => {
    const ask = {
      id: 2,
      method: 'item/permissions/requestApproval',
      params: { permissions: { network: { enabled: true }, fileSystem: null } },
    };
    expect(approvalAnswer(ask, true)).toEqual({ permissions: { network: { enabled: true } }, scope: 'turn' });
    expect(approvalAnswer(ask, false)).toEqual({ permissions: {}, scope: 'turn' });
  });
});
