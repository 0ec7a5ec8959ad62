/**
 * A careless owner's PATH has an empty entry, e.g. `export PATH=$EXTRA:$PATH` with `EXTRA` unset
 * (a leading `:`), which POSIX reads as the current directory. baton's own CLI lookup skips
 * relative and empty entries because they "would depend on the run's cwd" (harness/detect.ts),
 * but the child gets the PATH unchanged (harness/spawn-env.ts), and the run's cwd is the
 * repository. The pinned codex 0.171.0 launcher is `#!/usr/bin/env node`: `env` looks `node` up
 * on that PATH, in the repository first, so a repository that ships an executable `node` runs it
 * as the owner, outside any sandbox, before codex starts.
 * Real codex 0.171.0 through `baton ask`, a fake model server on 127.0.0.1.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let model: FakeOpenAI;
let home: CliHome;
let marker: string;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(join(tmpdir(), `path-cwd-codex-${process.pid}`), model.url);
  home = await makeCliHome({
    binDirs: [inject('codexBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}`,
  });
  home.env.PATH = `:${home.env.PATH}`;
  const outside = join(home.dir, 'outside');
  await mkdir(outside, { recursive: true });
  marker = join(outside, 'repo-node-ran');
  // The repository's `node`: leaves a mark, then hands over to the real node so nothing looks odd.
  await writeFile(
    join(home.repo, 'node'),
    `#!/bin/sh\ntouch ${JSON.stringify(marker)}\nexec ${JSON.stringify(process.execPath)} "$@"\n`,
    { mode: 0o755 },
  );
});
afterAll(async () => {
  await home?.dispose();
  await model?.close();
});

describe('an empty PATH entry in the owner’s environment', () => {
  it('does not make the run execute a program the repository ships', async () => {
    model.enqueue({ kind: 'message', text: 'Hello.' });
    const result = await home.baton(['ask', '--vendor', 'codex', 'say hello'], { timeoutMs: 90_000 });
    expect(result.stdout).toContain('Hello.');
    expect(existsSync(marker)).toBe(false);
  }, 120_000);
});
