/**
 * Attack: a filter driver whose name contains `=` escapes runGit's blanking.
 * runGit blanks drivers with `-c filter.NAME.clean=`; git splits `-c` at the FIRST `=`, so for
 * NAME = `x=y` that sets the meaningless key `filter.x` to `y.clean=` and the hostile
 * `filter.x=y.clean` command still runs on `git add -A` (the diff snapshot) — outside any sandbox.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runGit } from '../../src/harness/git.js';

const base = mkdtempSync(join(tmpdir(), 'baton-attack-eq-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('runGit and a filter driver named with "="', () => {
  it('does not run the driver on git add -A', async () => {
    const repo = join(base, 'repo');
    execFileSync('git', ['init', '-q', '-b', 'main', repo]);
    const mark = join(base, 'pwned');
    const script = join(base, 'clean.sh');
    writeFileSync(script, `#!/bin/sh\ntouch ${mark}\ncat\n`);
    chmodSync(script, 0o755);
    execFileSync('git', ['config', 'filter.x=y.clean', script], { cwd: repo });
    writeFileSync(join(repo, '.gitattributes'), '* filter=x=y\n');
    writeFileSync(join(repo, 'a.txt'), 'hi\n');
    await runGit(['add', '-A'], {
      cwd: repo,
      env: { GIT_INDEX_FILE: join(base, 'private.index') },
      allowFailure: true,
    });
    expect(existsSync(mark)).toBe(false);
  });
});
