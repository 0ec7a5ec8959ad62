/**
 * `baton service install [--user]` / `baton service uninstall [--user]`: a systemd unit that runs
 * `baton start`. systemd facts: systemd.service(5), systemd.exec(5),
 * systemd.kill(5), loginctl(1) `enable-linger`.
 */
import { lstat, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatonError } from '../core/errors.js';
import { UNIT_NAME, unitPath } from '../service/systemd-unit.js';

/** Where and for whom a unit is installed. */
export interface ServiceTarget {
  /** A user unit (`~/.config/systemd/user`) instead of a system unit (`/etc/systemd/system`). */
  user: boolean;
  homeDir: string;
  batonHome: string;
  /** PATH captured at install time: systemd starts units with a minimal PATH, and runs need the CLIs. */
  path: string;
  /** Absolute path of the Node.js binary. */
  nodePath: string;
  /**
   * Directories the unit's PATH keeps whatever {@link servicePath} would drop: where `codex` and
   * `claude` were found at install time, and Node's own (both CLIs start with `env node`).
   */
  keepDirs?: readonly string[];
  /** User name for a system unit's `User=`. */
  userName: string;
}

/**
 * Node options the service runs with (the unit's `ExecStart`, `npm start`, the tests' and bench's
 * `baton start`). `--max-semi-space-size=2` caps V8's young generation at 2 × 2 MB: loading the
 * chat SDKs (~1,500 CommonJS modules with all three channels) grows it to its 2 × 16 MB default,
 * and V8 keeps it committed at idle (139 → 114 MB RSS idle on PostgreSQL with three
 * channels connected, measured with `process.memoryUsage()` and `v8.getHeapSpaceStatistics()`;
 * new space 32 → 4 MB). Idle baton allocates little, so the cost is a few more, smaller scavenges
 * during start-up and stream parsing. Flag: `node --v8-options`.
 */
export const SERVICE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/** The unit text. Values with spaces are quoted per systemd.syntax(7). */
export function renderUnit(target: ServiceTarget): string {
  const cli = fileURLToPath(new URL('./baton.js', import.meta.url));
  const quote = (value: string): string =>
    /[\s"\\]/.test(value) ? `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : value;
  return [
    '[Unit]',
    'Description=baton: coding agents from chat',
    'After=network-online.target',
    'Wants=network-online.target',
    // A database that stays down for long must not make systemd stop restarting baton for good.
    'StartLimitIntervalSec=0',
    '',
    '[Service]',
    'Type=simple',
    ...(target.user ? [] : [`User=${target.userName}`]),
    `ExecStart=${[quote(target.nodePath), ...SERVICE_NODE_FLAGS, quote(cli)].join(' ')} start`,
    // WorkingDirectory= and EnvironmentFile= take a bare path (quotes would make it relative).
    `WorkingDirectory=${target.batonHome}`,
    `Environment=${quote(`BATON_HOME=${target.batonHome}`)}`,
    `Environment=${quote(`PATH=${servicePath(target.path, target.keepDirs)}`)}`,
    // Secrets stay in a 0600 file, never in the unit (which any local user may read).
    `EnvironmentFile=-${join(target.batonHome, '.env')}`,
    // SIGTERM to baton only, so it stops its runs and reports them; SIGKILL for the rest after the timeout.
    'KillMode=mixed',
    // The unit's cgroup subtree becomes baton's to write (systemd.resource-control(5)): each run
    // gets a cgroup of its own, so a process that leaves its session still ends with the run.
    'Delegate=yes',
    'TimeoutStopSec=30',
    'Restart=on-failure',
    // baton itself waits up to a minute for an unreachable database before it exits; the unit
    // then waits 30 s more per restart, and StartLimitIntervalSec=0 (above) keeps it restarting.
    'RestartSec=30',
    '',
    '[Install]',
    `WantedBy=${target.user ? 'default.target' : 'multi-user.target'}`,
    '',
  ].join('\n');
}

/**
 * Writes the unit (atomically) and returns the lines to print: where it went and what to run.
 *
 * @throws BatonError `usage` when a system unit is asked for without root.
 */
export async function installService(target: ServiceTarget, isRoot: boolean): Promise<string[]> {
  if (!target.user && !isRoot) {
    throw new BatonError(
      'usage',
      'A system unit needs root. Run `baton service install --user` for a user unit, or use sudo.',
    );
  }
  const path = unitPath(target);
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.tmp-${process.pid}`;
  await writeFile(temp, renderUnit(target), { mode: 0o644 });
  await rename(temp, path);
  const ctl = target.user ? 'systemctl --user' : 'systemctl';
  return [
    `Wrote ${path}`,
    `Start it now and at boot:  ${ctl} daemon-reload && ${ctl} enable --now baton`,
    ...(target.user ? [`Keep it running while you are logged out:  loginctl enable-linger ${target.userName}`] : []),
    `Logs: journalctl ${target.user ? '--user ' : ''}-u baton -f, and ${join(target.batonHome, 'logs', 'current.log')}`,
    `Secrets go in ${join(target.batonHome, '.env')} (chmod 600), not in the unit.`,
  ];
}

/**
 * The PATH a unit keeps: the install-time PATH without what npm/npx put in front of it
 * (`node_modules/.bin`, `_npx` caches, node-gyp shims) and without relative entries, so the
 * service never runs a `codex` from a directory someone else could create — except `keepDirs`
 * (where the CLIs were found when the owner installed the unit), which always stay.
 */
export function servicePath(path: string, keepDirs: readonly string[] = []): string {
  const keep = new Set(keepDirs.filter((dir) => isAbsolute(dir)));
  const kept = path
    .split(':')
    .filter((dir) => keep.has(dir) || (isAbsolute(dir) && !/\/node_modules\/\.bin$|\/_npx\/|node-gyp-bin/.test(dir)));
  // A kept directory that was not on PATH (Node's own, reached by absolute path) goes last.
  for (const dir of keep) if (!kept.includes(dir)) kept.push(dir);
  return [...new Set(kept)].join(':');
}

/**
 * Removes the unit; returns the lines to print. An enabled unit is left in place: `systemctl
 * disable` needs the unit file to find what to unlink, so removing it first would strand the
 * `.wants/` symlink and leave the service starting at boot (systemctl(1) `disable`).
 *
 * @throws BatonError `service_enabled` while `<target>.wants/baton.service` exists next to the unit.
 */
export async function uninstallService(target: Pick<ServiceTarget, 'user' | 'homeDir'>): Promise<string[]> {
  const path = unitPath(target);
  const ctl = target.user ? 'systemctl --user' : 'systemctl';
  if (
    !(await stat(path).then(
      () => true,
      () => false,
    ))
  )
    return [`No baton unit at ${path}; nothing to remove.`];
  const wants = join(dirname(path), `${target.user ? 'default' : 'multi-user'}.target.wants`, UNIT_NAME);
  if (
    await lstat(wants).then(
      () => true,
      () => false,
    )
  ) {
    throw new BatonError(
      'service_enabled',
      `baton's unit is still enabled (${wants}). Stop and disable it first: ${ctl} disable --now baton, then run baton service uninstall${target.user ? ' --user' : ''} again.`,
      { details: { path, wants } },
    );
  }
  await rm(path, { force: true });
  return [
    `Removed ${path}`,
    `If it still runs, stop it: ${ctl} stop baton. Then let systemd forget it: ${ctl} daemon-reload`,
  ];
}
