/**
 * The errors a newcomer meets in the first hour, through the built `baton` command: each is one
 * clear line with its fix, refuses what it should, and looking never creates anything.
 */
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { startService } from '../support/service.js';

let home: CliHome;

beforeAll(async () => {
  home = await makeCliHome({ binDirs: [], harnessToml: '' });
});
afterAll(async () => {
  await home?.dispose();
});

describe('baton start', () => {
  it('names BATON_HTTP_PORT in one line, without a stack trace, when the port is taken', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    try {
      const result = await home.baton(['start'], { env: { BATON_HTTP_PORT: String(port) } });
      expect(result.exitCode).toBe(1);
      const errors = result.stderr.trim().split('\n');
      expect(errors).toEqual([expect.stringContaining(`BATON_HTTP_PORT=${port}`)]);
      expect(errors[0]).toMatch(/already in use.*unset BATON_HTTP_PORT/);
      expect(result.stderr).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });

  it('refuses an unknown argument instead of starting', async () => {
    const result = await home.baton(['start', '--bogus']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/baton start takes no arguments \(got: --bogus\)/);
    expect(result.stderr).toContain('baton help');
    expect(result.stdout).not.toContain('baton started');
  });
});

describe('a mistyped command or option', () => {
  it('names the near miss: baton strat, baton doctor --jsn, baton ask --vendr, baton worktrees prun', async () => {
    const strat = await home.baton(['strat']);
    expect(strat.exitCode).toBe(2);
    expect(strat.stderr).toContain('unknown command "strat". Did you mean "start"?');
    const doctor = await home.baton(['doctor', '--jsn']);
    expect(doctor.exitCode).toBe(2);
    expect(doctor.stderr).toContain('Did you mean "--json"?');
    const ask = await home.baton(['ask', '--vendr', 'codex', 'x']);
    expect(ask.exitCode).toBe(2);
    expect(ask.stderr).toContain('Did you mean "--vendor"?');
    const prune = await home.baton(['worktrees', 'prun']);
    expect(prune.exitCode).toBe(2);
    expect(prune.stderr).toContain('Did you mean "prune"?');
    // A word nothing like a command gets no guess.
    const far = await home.baton(['xylophone']);
    expect(far.stderr).toContain('unknown command "xylophone".');
    expect(far.stderr).not.toContain('Did you mean');
  });
});

describe('baton grant path', () => {
  it('refuses a root that covers the whole disk or the home directory, unless --force', async () => {
    const config = join(home.batonHome, 'config.toml');
    const before = await readFile(config, 'utf8');
    const homeDir = home.env.HOME!;
    for (const dir of ['/', homeDir, join(homeDir, '..'), '~']) {
      const result = await home.baton(['grant', 'path', dir]);
      expect(result.exitCode, dir).toBe(1);
      expect(result.stderr, dir).toMatch(
        /covers (the whole disk|your whole home directory).*--force.*\[root_too_broad\]/,
      );
    }
    expect(await readFile(config, 'utf8')).toBe(before);
    await mkdir(join(homeDir, 'code'), { recursive: true });
    expect((await home.baton(['grant', 'path', '~/code'])).exitCode).toBe(0);
    const forced = await home.baton(['grant', 'path', '--force', homeDir]);
    expect(forced.exitCode).toBe(0);
    expect(await readFile(config, 'utf8')).toContain(JSON.stringify(homeDir));
  });
});

describe('looking at an empty home', () => {
  it('baton runs and baton doctor answer without creating a database', async () => {
    const emptyHome = join(home.dir, 'empty-baton-home');
    const env = { BATON_HOME: emptyHome, DATABASE_URL: '' };
    const runs = await home.baton(['runs'], { env });
    expect(runs.exitCode).toBe(0);
    expect(runs.stdout).toMatch(/No coding runs yet/);
    const doctor = await home.baton(['doctor'], { env });
    expect(doctor.stdout).toMatch(/not created yet/);
    expect(doctor.exitCode).toBe(0);
    expect((await home.baton(['cancel', 'hr_0123456789ab'], { env })).exitCode).toBe(1);
    await expect(stat(join(emptyHome, 'pgdata'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('workspace settings that point nowhere', () => {
  it('are doctor warnings and banner lines, not silently accepted', async () => {
    const batonHome = join(home.dir, 'odd-baton-home');
    await mkdir(batonHome, { recursive: true });
    const root = join(home.dir, 'work');
    const gone = join(home.dir, 'not-mounted');
    await writeFile(
      join(batonHome, 'config.toml'),
      [
        '[harness]',
        'approved = true',
        '[workspace]',
        `roots = [${JSON.stringify(root)}, ${JSON.stringify(gone)}]`,
        'default = "/usr"',
        '[projects]',
        `ghost = ${JSON.stringify(join(root, 'ghost'))}`,
        '',
      ].join('\n'),
    );
    const expected = [
      new RegExp(`workspace root ${gone} does not exist`),
      /\[workspace\] default \/usr is outside every workspace root/,
      new RegExp(`\\[projects\\] ghost = ${join(root, 'ghost')} does not exist`),
    ];
    const doctor = await home.baton(['doctor'], { env: { BATON_HOME: batonHome } });
    for (const pattern of expected) expect(doctor.stdout).toMatch(pattern);
    const service = await startService({ ...home.env, BATON_HOME: batonHome });
    try {
      const banner = service.stdout();
      for (const pattern of expected) expect(banner).toMatch(new RegExp(`^  warning: ${pattern.source}`, 'm'));
    } finally {
      await service.stop();
    }
  });
});
