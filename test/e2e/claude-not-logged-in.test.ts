/**
 * A claude that is not logged in (an empty CLAUDE_CONFIG_DIR, no ANTHROPIC_API_KEY): claude
 * 2.1.332 answers at once with a synthetic assistant message `Not logged in · Please run /login`
 * flagged `error: authentication_failed`, then an `is_error` result (measured; stderr is empty).
 * baton ends the run failed/not_logged_in with the fix, and offers no resume command.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeCliHome, type CliHome } from '../support/cli.js';

let home: CliHome;
let configDir: string;

beforeAll(async () => {
  configDir = join(tmpdir(), `not-logged-in-claude-${process.pid}`);
  await mkdir(configDir, { recursive: true });
  home = await makeCliHome({
    binDirs: [inject('claudeBinDir')],
    harnessToml: `claude_config_dir = ${JSON.stringify(configDir)}`,
  });
});
afterAll(async () => {
  await home?.dispose();
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

describe('claude that is not logged in', () => {
  it('ends the run failed/not_logged_in with the fix and no resume line', async () => {
    // Nothing listens on port 9: should claude try the network, it fails on loopback.
    const result = await home.baton(['ask', '--vendor', 'claude', '--json', 'anything'], {
      env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
      timeoutMs: 120_000,
    });
    expect(result.exitCode, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as {
      status: string;
      reason: string;
      errorMessage: string;
      messages: string[];
    };
    expect(report).toMatchObject({ status: 'failed', reason: 'not_logged_in' });
    expect(report.errorMessage).toContain('Not logged in');
    expect(report.errorMessage).toContain(`CLAUDE_CONFIG_DIR=${configDir} claude`);
    expect(report.errorMessage).toContain('[harness] claude_config_dir');
    const outcome = report.messages.join('\n');
    expect(outcome).toContain('Reason: not_logged_in');
    expect(outcome).not.toContain('Resume:');
    expect(outcome).not.toContain('claude --resume');
  }, 180_000);
});
