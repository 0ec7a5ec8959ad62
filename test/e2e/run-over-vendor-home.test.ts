/**
 * A careless owner grants their whole home (`baton grant path ~`) and sends a run there
 * (`/codex in:~ …`, or `baton ask` in `~`). The run's directory then contains `~/.codex`,
 * `~/.claude` and `~/.baton`, and codex's `workspace-write` sandbox lets the agent write anywhere
 * under its cwd except what codex itself protects (`.codex`, `.git`: measured, "Read-only file
 * system"). One tool call (a prompt injection in any file the agent reads suffices) then
 * - adds a `SessionStart` hook or `env.ANTHROPIC_BASE_URL` to `~/.claude/settings.json`, the
 *   user settings every later claude run loads (`--setting-sources=user`): the hook runs
 *   unsandboxed at the start of the next `/claude` run;
 * - rewrites `~/.baton/config.toml` or `~/.baton/.env` (roots, channels' owners, vendor homes).
 * The workspace gate (harness/workspace.ts) now refuses a directory that contains `$BATON_HOME` or
 * a vendor home (`cwd_holds_config`), before anything runs.
 * Real codex 0.171.0 through `baton ask`, a fake model server on 127.0.0.1.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let model: FakeOpenAI;
let home: CliHome;
let grantedRoot: string;
let codexHome: string;
let claudeDir: string;
let batonHome: string;

beforeAll(async () => {
  model = await startFakeOpenAI();
  home = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: '' });
  // The granted root plays the owner's home; their codex home is the usual `.codex` in it.
  grantedRoot = dirname(home.repo);
  codexHome = await makeCodexHome(join(grantedRoot, '.codex'), model.url);
  home.env.CODEX_HOME = codexHome;
  claudeDir = join(grantedRoot, '.claude');
  await mkdir(claudeDir, { recursive: true });
  await writeFile(join(claudeDir, 'settings.json'), '{}\n', { mode: 0o600 });
  home.env.CLAUDE_CONFIG_DIR = claudeDir;
  batonHome = join(grantedRoot, '.baton');
  await mkdir(batonHome, { recursive: true });
  await copyFile(join(home.batonHome, 'config.toml'), join(batonHome, 'config.toml'));
  home.env.BATON_HOME = batonHome;
});
afterAll(async () => {
  await home?.dispose();
  await model?.close();
});

describe('a run whose directory holds the owner’s CODEX_HOME, CLAUDE_CONFIG_DIR and BATON_HOME', () => {
  it('is refused before anything runs, and no config is touched', async () => {
    const before = await Promise.all(
      [join(codexHome, 'config.toml'), join(claudeDir, 'settings.json'), join(batonHome, 'config.toml')].map((f) =>
        readFile(f, 'utf8'),
      ),
    );
    const requests = model.requests.length;
    // Had it run, one tool call (any file's prompt injection) could have planted a hook in
    // claude's user settings or rewritten baton's config; it must not start at all.
    const result = await home.baton(['ask', '--vendor', 'codex', 'tidy up my home directory'], {
      cwd: grantedRoot,
      timeoutMs: 90_000,
    });
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toMatch(
      /holds .*, baton's or a coding CLI's own configuration, which a run there could rewrite\./,
    );
    expect(model.requests.length).toBe(requests);
    const after = await Promise.all(
      [join(codexHome, 'config.toml'), join(claudeDir, 'settings.json'), join(batonHome, 'config.toml')].map((f) =>
        readFile(f, 'utf8'),
      ),
    );
    expect(after).toEqual(before);
  }, 120_000);

  it('still runs in a project below it', async () => {
    model.enqueue({ kind: 'message', text: 'Worked in the project.' });
    const result = await home.baton(['ask', '--vendor', 'codex', 'work here'], { cwd: home.repo, timeoutMs: 90_000 });
    expect(result.stdout).toContain('Worked in the project.');
    expect(result.exitCode).toBe(0);
  }, 120_000);
});
