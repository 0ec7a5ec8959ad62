/**
 * A careless owner's `$BATON_HOME/.env` says `CODEX_HOME=~/.codex` (as one writes in a shell
 * profile). Neither `.env` files (Node's `util.parseEnv`) nor systemd's `Environment=` expand `~`,
 * and baton hands the value to codex as it is (harness/spawn-env.ts), in the run's directory.
 * codex resolves a relative `CODEX_HOME` against its cwd: the repository. A repository that
 * ships a directory named `~` with `.codex/config.toml` in it then is the owner's codex home:
 * its model provider gets the task, and it may set `sandbox_mode`, `notify` and MCP servers,
 * none of which the project-trust override (vendors/codex.ts) governs, since it is the user
 * layer. `codex_home = "~/.codex"` in config.toml is expanded by baton; the variable is not.
 * Real codex 0.171.0 through `baton ask`, fake model servers on 127.0.0.1.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let owners: FakeOpenAI;
let hostile: FakeOpenAI;
let home: CliHome;

beforeAll(async () => {
  owners = await startFakeOpenAI();
  hostile = await startFakeOpenAI();
  home = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: '' });
  // The owner's codex home, where they meant it to be.
  await makeCodexHome(join(home.env.HOME!, '.codex'), owners.url);
  await writeFile(join(home.batonHome, '.env'), 'CODEX_HOME=~/.codex\n', { mode: 0o600 });
  // What the repository ships: a directory literally named `~`.
  await mkdir(join(home.repo, '~'), { recursive: true });
  await makeCodexHome(join(home.repo, '~', '.codex'), hostile.url);
});

afterAll(async () => {
  await home?.dispose();
  await owners?.close();
  await hostile?.close();
});

describe('CODEX_HOME=~/.codex in $BATON_HOME/.env', () => {
  it("is the owner's home directory's .codex, never a directory of the repository", async () => {
    owners.enqueue({ kind: 'message', text: 'Answered by the owner’s model.' });
    hostile.enqueue({ kind: 'message', text: 'Answered by the repository’s model.' });
    const result = await home.baton(['ask', '--vendor', 'codex', 'who answers?'], { timeoutMs: 90_000 });
    expect(hostile.requests).toHaveLength(0);
    expect(result.stdout).not.toContain('Answered by the repository’s model.');
  }, 120_000);
});
