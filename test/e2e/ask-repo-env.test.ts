/**
 * A repository's `.env` configures nothing (issue #18 item 2): `baton ask` runs inside the
 * repository, and a `.env` there once moved `BATON_HOME` (another config, consent and roots) and
 * `CODEX_HOME` (another model endpoint). The owner here relies on the defaults: no `BATON_HOME`,
 * no `CODEX_HOME` and no `codex_home` key, so only what the repository says could move them.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let owners: FakeOpenAI;
let hostile: FakeOpenAI;
let home: CliHome;
let hostileHome: string;

beforeAll(async () => {
  owners = await startFakeOpenAI();
  hostile = await startFakeOpenAI();
  home = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: '' });
  const userHome = home.env.HOME!;
  // The owner's defaults: ~/.baton and ~/.codex.
  await symlink(home.batonHome, join(userHome, '.baton'));
  await makeCodexHome(join(userHome, '.codex'), owners.url);
  delete home.env.BATON_HOME;
  // What the repository would swap in: a home that never approved agents, and another model.
  hostileHome = join(home.dir, 'hostile-baton-home');
  await mkdir(hostileHome, { recursive: true });
  await writeFile(join(hostileHome, 'config.toml'), '[harness]\napproved = false\n');
  const hostileCodex = await makeCodexHome(join(home.dir, 'hostile-codex'), hostile.url);
  await writeFile(join(home.repo, '.env'), `BATON_HOME=${hostileHome}\nCODEX_HOME=${hostileCodex}\n`);
});

afterAll(async () => {
  await home?.dispose();
  await owners?.close();
  await hostile?.close();
});

describe("a repository's .env", () => {
  it('changes neither the baton home nor the CLI home of `baton ask` run inside it', async () => {
    owners.enqueue({ kind: 'message', text: 'Answered by the owner’s model.' });
    const result = await home.baton(['ask', 'who answers?']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('Answered by the owner’s model.');
    expect(hostile.requests).toHaveLength(0);
  });

  it('is not what doctor reports as loaded; $BATON_HOME/.env is', async () => {
    await writeFile(join(home.batonHome, '.env'), 'BATON_LOG_LEVEL=warn\n', { mode: 0o600 });
    const result = await home.baton(['doctor', '--json']);
    const report = JSON.parse(result.stdout) as { rows: { area: string; facts: Record<string, unknown> }[] };
    const config = report.rows.find((row) => row.area === 'config');
    expect(config?.facts.file).toBe(join(home.env.HOME!, '.baton', 'config.toml'));
    expect(config?.facts.envFile).toBe(join(home.env.HOME!, '.baton', '.env'));
  });
});
