/**
 * Which node a launch goes to (issue #16 item 3): `node:path` targets (in `in:` or an alias), a
 * path under another live node's roots, refusals naming a dead or unknown node.
 */
import { describe, expect, it } from 'vitest';
import type { NodeView } from '../../src/fleet/nodes.js';
import { splitNodeTarget } from '../../src/core/node-target.js';
import { routeLaunch, type RouteContext } from '../../src/fleet/route.js';
import { runPlace } from '../../src/wording/run-tag.js';

const node = (name: string, roots: string[], alive = true, self = false): NodeView => ({
  name,
  host: `${name}-host`,
  pid: 1,
  roots,
  startedAt: new Date(0),
  heartbeatAt: new Date(0),
  silentSeconds: alive ? 1 : 42,
  alive,
  self,
});

const context: RouteContext = {
  self: 'alpha',
  roots: ['/home/me/code'],
  projects: new Map([
    ['app', '/home/me/code/app'],
    ['lib', 'buildbox:~/code/lib'],
    ['mine', 'alpha:/home/me/code/mine'],
    ['gone', 'oldbox:/srv/x'],
  ]),
  nodes: [
    node('alpha', ['/home/me/code'], true, true),
    node('buildbox', ['/srv/build']),
    node('oldbox', ['/srv/old'], false),
  ],
};

describe('splitNodeTarget', () => {
  it('splits node:path for absolute and ~ paths only', () => {
    expect(splitNodeTarget('buildbox:~/code/app')).toEqual({ node: 'buildbox', path: '~/code/app' });
    expect(splitNodeTarget('buildbox:/srv/a:b')).toEqual({ node: 'buildbox', path: '/srv/a:b' });
    expect(splitNodeTarget('/srv/a:b')).toBeUndefined();
    expect(splitNodeTarget('app')).toBeUndefined();
    expect(splitNodeTarget('box:relative/dir')).toBeUndefined();
    expect(splitNodeTarget('-box:/x')).toBeUndefined();
  });
});

describe('routeLaunch', () => {
  it('keeps targets of this node here', () => {
    expect(routeLaunch(undefined, context)).toEqual({ kind: 'local', target: undefined });
    expect(routeLaunch('app', context)).toEqual({ kind: 'local', target: 'app' });
    expect(routeLaunch('/home/me/code/x', context)).toEqual({ kind: 'local', target: '/home/me/code/x' });
    expect(routeLaunch('~/code/x', context)).toEqual({ kind: 'local', target: '~/code/x' });
    // Naming this node drops the prefix.
    expect(routeLaunch('mine', context)).toEqual({ kind: 'local', target: '/home/me/code/mine' });
    expect(routeLaunch('alpha:~/code/y', context)).toEqual({ kind: 'local', target: '~/code/y' });
    // Under nobody's roots: stays here, where the workspace gate refuses it as before.
    expect(routeLaunch('/etc', context)).toEqual({ kind: 'local', target: '/etc' });
  });

  it('sends a target naming a live node, or under its roots only, to that node', () => {
    expect(routeLaunch('lib', context)).toEqual({ kind: 'remote', node: 'buildbox', path: '~/code/lib' });
    expect(routeLaunch('buildbox:/anywhere', context)).toEqual({ kind: 'remote', node: 'buildbox', path: '/anywhere' });
    expect(routeLaunch('/srv/build/app/../app', context)).toEqual({
      kind: 'remote',
      node: 'buildbox',
      path: '/srv/build/app',
    });
    // Under this node's roots too: here wins.
    const overlapping = { ...context, nodes: [...context.nodes, node('wide', ['/home/me'])] };
    expect(routeLaunch('/home/me/code/app', overlapping)).toEqual({ kind: 'local', target: '/home/me/code/app' });
    // A dead node's roots route nothing.
    expect(routeLaunch('/srv/old/app', context)).toEqual({ kind: 'local', target: '/srv/old/app' });
  });

  it('refuses a dead or unknown node by name', () => {
    expect(() => routeLaunch('gone', context)).toThrow(
      expect.objectContaining({
        code: 'node_unavailable',
        message: expect.stringMatching(/^Node oldbox is not answering \(last heartbeat 42 s ago\)/),
      }),
    );
    expect(() => routeLaunch('nowhere:/srv/app', context)).toThrow(
      expect.objectContaining({
        code: 'node_unknown',
        message: expect.stringMatching(/^No node named nowhere is in this fleet now .*Live nodes: alpha, buildbox\./),
      }),
    );
  });
});

describe('runPlace', () => {
  it('shows the node only for a run routed away from the node that received it', () => {
    expect(runPlace({ cwd: '/a' })).toBe('/a');
    expect(runPlace({ cwd: '/a', node: 'alpha', origin: { node: 'alpha' } })).toBe('/a');
    expect(runPlace({ cwd: '/a', node: 'gamma', origin: { node: 'alpha' } })).toBe('gamma:/a');
  });
});
