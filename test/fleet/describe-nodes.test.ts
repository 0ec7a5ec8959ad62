/**
 * describeNodes after a kill -9 and a quick restart: the old row (same name, same host, its pid
 * gone) is this node's previous life, not a second live node, so no "give each its own name".
 */
import { describe, expect, it } from 'vitest';
import { describeNodes, type NodeView } from '../../src/fleet/nodes.js';

const at = new Date('2026-12-01T06:00:00Z');
function node(overrides: Partial<NodeView>): NodeView {
  return {
    name: 'alpha',
    host: 'box',
    pid: 100,
    roots: ['/srv'],
    startedAt: at,
    heartbeatAt: at,
    silentSeconds: 1,
    alive: true,
    self: false,
    ...overrides,
  };
}

describe('describeNodes', () => {
  it('calls a same-name, same-host row whose pid is gone this node’s previous process, with no name advice', () => {
    const list = [node({ pid: 100 }), node({ pid: 200, self: true })];
    const lines = describeNodes(list, { isLocalBaton: (pid) => pid === 200 });
    expect(lines.join('\n')).not.toMatch(/two live nodes share this name/);
    expect(lines[0]).toBe(
      'alpha · box pid 100 · previous process of this node: pid 100 exited without stopping; its runs are reconciled',
    );
    expect(lines[1]).toBe('alpha (this) · box pid 200 · alive');
  });

  it('still flags two live baton processes with one name, and one on another host', () => {
    const sameHost = [node({ pid: 100 }), node({ pid: 200, self: true })];
    expect(describeNodes(sameHost, { isLocalBaton: () => true }).join('\n')).toMatch(/two live nodes share this name/);
    const otherHost = [node({ host: 'other', pid: 100 }), node({ pid: 200, self: true })];
    expect(describeNodes(otherHost, { isLocalBaton: (pid) => pid === 200 }).join('\n')).toMatch(
      /two live nodes share this name/,
    );
  });
});
