import { mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import {
  installService,
  renderUnit,
  SERVICE_NODE_FLAGS,
  servicePath,
  uninstallService,
  type ServiceTarget,
} from '../../src/cli/service.js';
import { unitPath } from '../../src/service/systemd-unit.js';

let home: string;
let target: ServiceTarget;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'baton-svc-'));
  target = {
    user: true,
    homeDir: home,
    batonHome: join(home, '.baton dir'),
    path: '/opt/codex/bin:/usr/bin',
    nodePath: '/usr/bin/node',
    userName: 'dev',
  };
});
afterAll(async () => rm(home, { recursive: true, force: true }));

describe('systemd service', () => {
  it('renders a unit that runs baton start with the install-time PATH and no secret', () => {
    const unit = renderUnit(target);
    // The young generation capped (issue #15: 25 MB less idle RSS), as `npm start` runs it too.
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node --max-semi-space-size=2 \S+\/cli\/baton\.js start$/m);
    expect(unit).toContain(`Environment="BATON_HOME=${join(home, '.baton dir')}"`);
    expect(unit).toContain('Environment=PATH=/opt/codex/bin:/usr/bin');
    expect(unit).toContain(`EnvironmentFile=-${join(home, '.baton dir', '.env')}`);
    expect(unit).toContain(`WorkingDirectory=${join(home, '.baton dir')}`);
    expect(unit).toContain('KillMode=mixed');
    expect(unit).toContain('WantedBy=default.target');
    expect(unit).not.toMatch(/^User=/m);
    expect(renderUnit({ ...target, user: false })).toMatch(/^User=dev$/m);
  });

  it('spaces restarts while the database is down and never stops restarting (issue #18 item 10)', () => {
    const unit = renderUnit(target);
    const section = (name: string): string => unit.split(/^\[/m).find((part) => part.startsWith(`${name}]`)) ?? '';
    // StartLimitIntervalSec= belongs to [Unit] (systemd.unit(5)); RestartSec= to [Service] (systemd.service(5)).
    expect(section('Unit')).toMatch(/^StartLimitIntervalSec=0$/m);
    expect(section('Service')).toMatch(/^Restart=on-failure$/m);
    expect(section('Service')).toMatch(/^RestartSec=30$/m);
  });

  it('delegates its cgroup subtree, so runs get a cgroup of their own as a normal user (systemd.resource-control(5) Delegate=)', () => {
    const section = (unit: string): string => unit.split(/^\[/m).find((part) => part.startsWith('Service]')) ?? '';
    expect(section(renderUnit(target))).toMatch(/^Delegate=yes$/m);
    expect(section(renderUnit({ ...target, user: false }))).toMatch(/^Delegate=yes$/m);
  });

  it('installs a user unit with the linger hint, and uninstalls it', async () => {
    const lines = await installService(target, false);
    const path = unitPath(target);
    expect(path).toBe(join(home, '.config', 'systemd', 'user', 'baton.service'));
    expect(await readFile(path, 'utf8')).toBe(renderUnit(target));
    expect(lines.join('\n')).toContain('loginctl enable-linger dev');
    expect(lines.join('\n')).toContain('systemctl --user daemon-reload && systemctl --user enable --now baton');
    await uninstallService(target);
    await expect(stat(path)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('keeps the user PATH but drops what npm and npx put in front of it', () => {
    expect(
      servicePath(
        '/root/.npm/_npx/ab12/node_modules/.bin:/tmp/x/node_modules/.bin:relative:/opt/codex/bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/usr/bin:/usr/bin',
      ),
    ).toBe('/opt/codex/bin:/usr/bin');
  });

  it('keeps the directories where codex and claude were found, even ones it would drop', () => {
    expect(servicePath('/work/app/node_modules/.bin:/usr/bin', ['/work/app/node_modules/.bin', '/opt/node/bin'])).toBe(
      '/work/app/node_modules/.bin:/usr/bin:/opt/node/bin',
    );
  });

  it('refuses to remove an enabled unit (systemctl disable needs its file) and says what to run first', async () => {
    await installService(target, false);
    const wants = join(home, '.config', 'systemd', 'user', 'default.target.wants');
    await mkdir(wants, { recursive: true });
    await symlink(unitPath(target), join(wants, 'baton.service'));
    await expect(uninstallService(target)).rejects.toMatchObject({
      code: 'service_enabled',
      message: expect.stringContaining(
        'systemctl --user disable --now baton, then run baton service uninstall --user again',
      ),
    });
    expect((await stat(unitPath(target))).isFile()).toBe(true);
    // Once disabled (the symlink gone), it is removed, and the only step left is the reload.
    await rm(join(wants, 'baton.service'));
    const lines = await uninstallService(target);
    expect(lines[0]).toBe(`Removed ${unitPath(target)}`);
    expect(lines.join('\n')).not.toContain('disable');
    expect(lines.join('\n')).toContain('systemctl --user daemon-reload');
  });

  it('says so when there is nothing to uninstall', async () => {
    expect(await uninstallService(target)).toEqual([`No baton unit at ${unitPath(target)}; nothing to remove.`]);
  });

  it('refuses a system unit without root', async () => {
    await expect(installService({ ...target, user: false }, false)).rejects.toMatchObject({ code: 'usage' });
  });
});

describe('the baton command itself', () => {
  it('runs with the service flags when started through its own file (npm link, npm install -g)', async () => {
    // `baton start` through the linked command used to run without them (~25 MB more idle RSS).
    const cli = fileURLToPath(new URL('../../dist/cli/baton.js', import.meta.url));
    const shebang = (await readFile(cli, 'utf8')).split('\n')[0]!;
    for (const flag of SERVICE_NODE_FLAGS) expect(shebang.split(/\s+/)).toContain(flag);
    // The line runs as the kernel runs it (npm makes the file executable when it links it):
    // the interpreter, then the one argument after it, then the file.
    const [interpreter, ...rest] = shebang.slice(2).trim().split(/\s+/);
    const argument = rest.join(' ');
    const { stdout } = await promisify(execFile)(interpreter!, [argument, cli, 'version'], {
      env: { ...process.env, BATON_HOME: join(home, 'version-home') },
    });
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
