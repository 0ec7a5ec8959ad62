/**
 * The `-c projects={…}` override that keeps a repository's `.codex/config.toml` from loading
 * (vendors/codex.ts `untrustedProjects`) is built from the run's directory and its ancestors with
 * `JSON.stringify`, on the claim that JSON string escapes are valid TOML. They are not for every
 * character: JSON leaves U+007F (DEL) raw, and TOML forbids it raw in a basic string. codex
 * 0.171.0 then takes the whole value as a plain string ("if the value cannot be parsed as TOML,
 * it is treated as a string") and refuses its config: `invalid type: string "…", expected a map
 * in `projects``. A directory name is chosen by whoever made the repository (any sub-directory a
 * run is sent into, or a clone's own name), so a repository can make every codex run in it fail.
 * Real codex 0.171.0 through `baton ask`, a fake model server on 127.0.0.1.
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let model: FakeOpenAI;
let home: CliHome;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(join(tmpdir(), `path-override-codex-${process.pid}`), model.url);
  home = await makeCliHome({
    binDirs: [inject('codexBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}`,
  });
});
afterAll(async () => {
  await home?.dispose();
  await model?.close();
});

describe('a run directory whose name the TOML override must quote', () => {
  // Run first: a failed run of the DEL case leaves its queued answer unconsumed.
  it('codex runs in directories named with quotes, backslashes, dots, newlines and other scripts', async () => {
    // Held: JSON escapes these the way TOML reads them (a double quote is refused by `baton ask`).
    for (const name of [
      "it's",
      'back\\slash',
      '..dots..',
      'line\nbreak',
      'tab\there',
      'ünïcødé-日本-🙂',
      '[projects]',
    ]) {
      const dir = join(home.repo, name);
      await mkdir(dir, { recursive: true });
      model.enqueue({ kind: 'message', text: 'Ran there.' });
      const result = await home.baton(['ask', '--vendor', 'codex', 'say where you are'], { cwd: dir });
      expect({ name, completed: /\] completed/.test(result.stdout), exitCode: result.exitCode }).toEqual({
        name,
        completed: true,
        exitCode: 0,
      });
    }
  }, 180_000);

  it('codex runs in a directory whose name holds U+007F (DEL)', async () => {
    const dir = join(home.repo, 'build\u007Fcache');
    await mkdir(dir, { recursive: true });
    model.enqueue({ kind: 'message', text: 'Ran in the odd directory.' });
    const result = await home.baton(['ask', '--vendor', 'codex', 'say where you are'], { cwd: dir });
    expect(result.stdout + result.stderr).not.toMatch(/expected a map/);
    expect(result.stdout).toContain('Ran in the odd directory.');
    expect(result.exitCode).toBe(0);
  }, 60_000);
});
