/**
 * `baton console` as a user runs it: without a running service it says how to start one and exits
 * 1; a wrong flag is a usage error naming the right one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, type CliHome } from '../support/cli.js';

let home: CliHome;
beforeAll(async () => {
  home = await makeCliHome({ binDirs: [], harnessToml: '' });
});
afterAll(async () => home?.dispose());

describe('baton console', () => {
  it('refuses without a running service, naming baton start', async () => {
    const result = await home.baton(['console']);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('`baton start`');
    expect(result.stderr).toContain('[service_not_running]');
  });

  it('refuses an unknown flag with the usage line', async () => {
    const result = await home.baton(['console', '--opn']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--open');
    expect(result.stderr).toContain('Usage: baton console [--open]');
  });
});
