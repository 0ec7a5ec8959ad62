/**
 * A careless owner's `$BATON_HOME/.env` says `CODEX_HOME=~/.codex` (as one writes in a shell
 * profile). Neither `.env` files (Node's `util.parseEnv`) nor systemd's `Environment=` expand `~`,
 * and baton hands the value to codex as it is (harness/spawn-env.ts), in the run's directory.
 * codex resolves a relative `CODEX_HOME` against its cwd: the repository. A repository that
 * ships a directory named `~` with `.codex/config.toml` in it then is the owner's codex home:
 * its model provider gets the task, and it may set `sandbox_mode`, `notify` and MCP servers,
 * none of which the project-trust override (vendors/codex.ts) governs, since it is the user
 * layer. `codex_home = "~/.codex"` in config.toml is expanded by baton; the variable is not.
 * The same holds for `CLAUDE_CONFIG_DIR=~/.claude`: the repository's `~/.claude/settings.json` is
 * then the user settings, which `--setting-sources=user` loads (its `env` moves the endpoint).
 * Real codex 0.171.0 and claude 2.1.197 through `baton ask`, fake model servers on 127.0.0.1.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeClaudeConfigDir } from '../support/claude-home.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let owners: FakeOpenAI;
let hostile: FakeOpenAI;
let home: CliHome;
let ownersClaude: FakeAnthropic;
let hostileClaude: FakeAnthropic;

beforeAll(async () => {
  owners = await startFakeOpenAI();
  hostile = await startFakeOpenAI();
  ownersClaude = await startFakeAnthropic();
  hostileClaude = await startFakeAnthropic();
  home = await makeCliHome({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')], harnessToml: '' });
  await makeClaudeConfigDir(join(home.env.HOME!, '.claude'), ownersClaude.url);
  await makeClaudeConfigDir(join(home.repo, '~', '.claude'), hostileClaude.url);
  // The owner's codex home, where they meant it to be.
  await makeCodexHome(join(home.env.HOME!, '.codex'), owners.url);
  await writeFile(join(home.batonHome, '.env'), 'CODEX_HOME=~/.codex\nCLAUDE_CONFIG_DIR=~/.claude\n', { mode: 0o600 });
  // What the repository ships: a directory literally named `~`.
  await mkdir(join(home.repo, '~'), { recursive: true });
  await makeCodexHome(join(home.repo, '~', '.codex'), hostile.url);
});

afterAll(async () => {
  await home?.dispose();
  await owners?.close();
  await hostile?.close();
  await ownersClaude?.close();
  await hostileClaude?.close();
});

describe('CODEX_HOME=~/.codex and CLAUDE_CONFIG_DIR=~/.claude in $BATON_HOME/.env', () => {
  it("CODEX_HOME is the owner's home directory's .codex, never a directory of the repository", async () => {
    owners.enqueue({ kind: 'message', text: 'Answered by the owner’s model.' });
    hostile.enqueue({ kind: 'message', text: 'Answered by the repository’s model.' });
    const result = await home.baton(['ask', '--vendor', 'codex', 'who answers?'], { timeoutMs: 90_000 });
    expect(hostile.requests).toHaveLength(0);
    expect(result.stdout).not.toContain('Answered by the repository’s model.');
  }, 120_000);

  it("CLAUDE_CONFIG_DIR is the owner's home directory's .claude, never a directory of the repository", async () => {
    ownersClaude.enqueue({ kind: 'message', text: 'Answered by the owner’s model.' });
    hostileClaude.enqueue({ kind: 'message', text: 'Answered by the repository’s model.' });
    const result = await home.baton(['ask', '--vendor', 'claude', 'who answers?'], { timeoutMs: 90_000 });
    expect(hostileClaude.requests).toHaveLength(0);
    expect(result.stdout).not.toContain('Answered by the repository’s model.');
  }, 120_000);
});
