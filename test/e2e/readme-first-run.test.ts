/**
 * The README's "First run, from the terminal" lines, run literally as a newcomer would: in a
 * fresh HOME (so `~/code` and `~/.baton` are new), from this clone, with `PATH` as the README
 * sets it — `npm link` into an npm prefix of the test's own, whose `bin` is on `PATH` — and the
 * real codex CLI talking to the fake Responses API.
 */
import { execa } from 'execa';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCodexHome } from '../support/codex-home.js';
import { makeTestHome, type TestHome } from '../support/home.js';

const CLONE = fileURLToPath(new URL('../..', import.meta.url));
const readme = await readFile(join(CLONE, 'README.md'), 'utf8');

/** The shell lines of the first fenced `sh` block under `## First run`. */
function firstRunLines(): string[] {
  const section = readme.slice(readme.indexOf('## First run'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README has no sh block under "## First run"');
  return block[1]!.split('\n').filter((line) => line.trim() !== '');
}

let model: FakeOpenAI;
let home: TestHome;

beforeAll(async () => {
  model = await startFakeOpenAI();
  home = await makeTestHome('baton-readme-', []);
  // What the README assumes the reader already has: a repository at ~/code/app.
  await mkdir(join(home.home, 'code', 'app'), { recursive: true });
  await execa('git', ['init', '-q', join(home.home, 'code', 'app')]);
  await writeFile(join(home.home, 'code', 'app', 'README'), 'an app\n');
});
afterAll(async () => {
  await home?.dispose();
  await model?.close();
});

describe('README first run', () => {
  it('never tells users to run npx baton (outside the clone npx fetches an unrelated package)', () => {
    expect(readme).not.toMatch(/^\s*(cd [^\n]*&& )?npx baton/m);
    for (const line of firstRunLines()) expect(line).not.toMatch(/\bnpx\b/);
  });

  it('reaches a completed baton ask from the README lines alone, from any directory', async () => {
    const lines = firstRunLines();
    expect(lines[0]).toMatch(/^npm link\b/);
    model.enqueue({ kind: 'message', text: 'This repository holds an app.' });
    const prefix = join(home.dir, 'npm-global');
    const codexHome = await makeCodexHome(join(home.dir, 'codex-home'), model.url);
    const env: Record<string, string> = {
      ...home.env,
      // The newcomer's own environment: HOME, a PATH with the global npm bin first, and their
      // logged-in codex (here: pointed at the fake model).
      PATH: [join(prefix, 'bin'), inject('codexBinDir'), process.env.PATH ?? '/usr/bin:/bin'].join(':'),
      CODEX_HOME: codexHome,
      npm_config_prefix: prefix,
      // `npm test` built dist/ already; a second build here would rewrite files other suites run.
      npm_config_ignore_scripts: 'true',
      npm_config_update_notifier: 'false',
    };
    delete env.BATON_HOME; // the README relies on the default ~/.baton
    const script = ['set -eu', ...lines.map((line) => line.replace(/\s+#.*$/, ''))].join('\n');
    const result = await execa('bash', ['-c', script], {
      cwd: CLONE,
      env,
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
    });
    const output = `${String(result.stdout)}\n${String(result.stderr)}`;
    expect(output, output).toMatch(/\[run hr_[0-9a-f]{12}\] completed · codex · /);
    expect(result.exitCode, output).toBe(0);
    expect(String(result.stdout)).toContain('This repository holds an app.');
    expect(String(result.stdout)).toContain(join(home.home, 'code', 'app'));
    expect(await readFile(join(home.home, '.baton', 'config.toml'), 'utf8')).toMatch(/approved = true/);
  });
});
