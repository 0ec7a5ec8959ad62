import { describe, expect, it } from 'vitest';
import { mayPerform, roleOf, type Action, type Role } from '../../src/dispatch/trust.js';

const trust = { owner: '1', guests: ['2'] };

describe('roleOf', () => {
  it.each([
    ['1', 'owner'],
    ['2', 'guest'],
    ['3', 'stranger'],
    ['', 'stranger'],
  ] as const)('sender %j is %s', (sender, role) => {
    expect(roleOf(trust, sender)).toBe(role);
  });

  it('has no owner when none is configured', () => {
    expect(roleOf({ owner: undefined, guests: [] }, 'undefined')).toBe('stranger');
  });
});

// PRODUCT.md §4: caller × action × (direct message?) → allowed.
const matrix: [Role, Action, boolean, boolean][] = [
  ['owner', 'launch', true, true],
  ['owner', 'launch', false, true],
  ['owner', 'read', false, true],
  ['owner', 'whoami', false, true],
  ['guest', 'launch', true, false],
  ['guest', 'launch', false, false],
  ['guest', 'read', true, true],
  ['guest', 'read', false, true],
  ['guest', 'whoami', false, true],
  ['stranger', 'launch', true, false],
  ['stranger', 'read', true, false],
  ['stranger', 'whoami', true, true],
  ['stranger', 'whoami', false, false],
  ['stranger', 'read', false, false],
];

describe('mayPerform (the trust matrix)', () => {
  it.each(matrix)('%s may %s (direct: %s) → %s', (role, action, direct, allowed) => {
    expect(mayPerform(role, action, direct)).toBe(allowed);
  });
});
