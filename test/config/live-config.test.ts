import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveConfig, restartHow } from '../../src/config/live.js';
import { parseConfigToml } from '../../src/config/load.js';
import { createLogger } from '../../src/core/logger.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-live-config-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('LiveConfig', () => {
  it('applies consent and roots, names other keys as needing a restart, keeps its settings on a bad file', async () => {
    const configPath = join(dir, 'config.toml');
    const startText = '[harness]\nmax_active = 2\n';
    await writeFile(configPath, startText);
    const config = parseConfigToml(startText, { configPath, homeDir: dir });
    const live = new LiveConfig({
      configPath,
      homeDir: dir,
      config,
      logger: createLogger({ level: 'silent' }),
      restartHow: 'HOW',
    });
    await live.refresh();
    expect(live.state).toEqual({ kind: 'current' });
    expect(live.current.harness.approved).toBe(false);

    await writeFile(configPath, `[harness]\nmax_active = 2\napproved = true\n[workspace]\nroots = ["${dir}"]\n`);
    await live.refresh();
    expect(live.current.harness.approved).toBe(true);
    expect(live.current.workspace.roots).toEqual([dir]);
    expect(live.state).toEqual({ kind: 'current' });
    expect(live.describe()).toBeUndefined();

    await writeFile(
      configPath,
      `[harness]\nmax_active = 5\napproved = true\n[workspace]\nroots = ["${dir}"]\ndefault = "${dir}"\n`,
    );
    await live.refresh();
    expect(live.state).toEqual({ kind: 'restart_needed', keys: ['harness.max_active', 'workspace.default'] });
    expect(live.current.harness.maxActive).toBe(2);
    expect(live.describe()).toBe(
      'config changed since the service started (harness.max_active, workspace.default): restart it (HOW)',
    );

    await writeFile(configPath, '[harness]\napproved = false\nbogus = 1\n');
    await live.refresh();
    expect(live.state.kind).toBe('invalid');
    expect(live.current.harness.approved).toBe(true);
    expect(live.describe()).toMatch(
      /^config changed since the service started and cannot be used, so the service keeps its old settings: Invalid configuration in .* Fix the file, then restart it \(HOW\)$/,
    );
  });

  it('reads a long config.toml whole, and refuses one over 1 MiB', async () => {
    const sub = await mkdtemp(join(dir, 'long-'));
    const configPath = join(sub, 'config.toml');
    const startText = `[harness]\napproved = false\n`;
    await writeFile(configPath, startText);
    const config = parseConfigToml(startText, { configPath, homeDir: sub });
    const live = new LiveConfig({
      configPath,
      homeDir: sub,
      config,
      logger: createLogger({ level: 'silent' }),
      restartHow: 'HOW',
    });
    // 900 KiB of comment first: the setting at the very end must be read.
    const padding = `# ${'x'.repeat(1022)}\n`.repeat(900);
    await writeFile(configPath, `${padding}[harness]\napproved = true\n`);
    await live.refresh();
    expect(live.state).toEqual({ kind: 'current' });
    expect(live.current.harness.approved).toBe(true);
    await writeFile(configPath, `${`# ${'x'.repeat(1022)}\n`.repeat(1025)}[harness]\napproved = false\n`);
    await live.refresh();
    expect(live.state.kind).toBe('invalid');
    expect(live.describe()).toMatch(/over 1048576 bytes/);
    expect(live.current.harness.approved).toBe(true);
  });

  it('keeps its settings when config.toml becomes a FIFO or a device, without waiting on it', async () => {
    const sub = await mkdtemp(join(dir, 'special-'));
    const configPath = join(sub, 'config.toml');
    const startText = `[harness]\napproved = true\n[workspace]\nroots = ["${sub}"]\n`;
    await writeFile(configPath, startText);
    const config = parseConfigToml(startText, { configPath, homeDir: sub });
    const live = new LiveConfig({
      configPath,
      homeDir: sub,
      config,
      logger: createLogger({ level: 'silent' }),
      restartHow: 'HOW',
    });
    await live.refresh();
    // A named pipe nobody writes: reading it would wait forever, and every command waits on refresh().
    await rm(configPath);
    await execa('mkfifo', [configPath]);
    await live.refresh();
    expect(live.state.kind).toBe('invalid');
    expect(live.current.harness.approved).toBe(true);
    expect(live.current.workspace.roots).toEqual([sub]);
    // A symlink to an endless device: reading it would never end (or exhaust memory).
    await rm(configPath);
    await symlink('/dev/zero', configPath);
    await live.refresh();
    expect(live.state.kind).toBe('invalid');
    expect(live.current.harness.approved).toBe(true);
  }, 30_000);

  it('says how to restart a foreground service and a systemd unit', () => {
    expect(restartHow({ underSystemd: true, isRoot: false, pid: 7 })).toBe('systemctl --user restart baton');
    expect(restartHow({ underSystemd: true, isRoot: true, pid: 7 })).toBe('systemctl restart baton');
    expect(restartHow({ underSystemd: false, isRoot: false, pid: 7 })).toBe(
      'stop it with Ctrl-C in its terminal, or kill 7, then run baton start again',
    );
  });
});
