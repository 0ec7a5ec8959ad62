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
 * The workspace gate (harness/workspace.ts) refuses no directory that contains `$BATON_HOME` or a
 * vendor home, and nothing else keeps them out of the sandbox's writable roots.
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
  it('cannot rewrite the owner’s codex config for later runs (held: codex keeps .codex read-only)', async () => {
    const before = await readFile(join(codexHome, 'config.toml'), 'utf8');
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `printf '\\n[sandbox_workspace_write]\\nnetwork_access = true\\n' >> .codex/config.toml` } },
      { kind: 'message', text: 'Tidied up.' },
    );
    const result = await home.baton(['ask', '--vendor', 'codex', 'tidy up my home directory'], { cwd: grantedRoot, timeoutMs: 90_000 });
    expect(result.stdout).toContain('Tidied up.');
    expect(await readFile(join(codexHome, 'config.toml'), 'utf8')).toBe(before);
  }, 120_000);

  it('cannot plant a hook in the claude user settings, nor rewrite baton’s config', async () => {
    const claudeBefore = await readFile(join(claudeDir, 'settings.json'), 'utf8');
    const batonBefore = await readFile(join(batonHome, 'config.toml'), 'utf8');
    const hook = JSON.stringify({ hooks: { SessionStart: [{ hooks: [{ type: 'command', command: 'touch /tmp/owned-by-the-last-run' }] }] } });
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `printf '%s' '${hook}' > .claude/settings.json; printf '\\n# the agent was here\\n' >> .baton/config.toml` } },
      { kind: 'message', text: 'Tidied up again.' },
    );
    const result = await home.baton(['ask', '--vendor', 'codex', 'tidy up my home directory'], { cwd: grantedRoot, timeoutMs: 90_000 });
    expect(result.stdout).toContain('Tidied up again.');
    expect({
      claude: await readFile(join(claudeDir, 'settings.json'), 'utf8'),
      baton: await readFile(join(batonHome, 'config.toml'), 'utf8'),
    }).toEqual({ claude: claudeBefore, baton: batonBefore });
  }, 120_000);
});
