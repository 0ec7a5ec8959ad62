/**
 * Where baton's systemd unit lives, and whether the installed one delegates its cgroup: the
 * service's doctor report and `baton doctor` read it; `baton service install` writes it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The unit's file name. */
export const UNIT_NAME = 'baton.service';

/** Where the unit file goes: a user unit (`~/.config/systemd/user`) or a system unit (`/etc/systemd/system`). */
export function unitPath(target: { user: boolean; homeDir: string }): string {
  return target.user
    ? join(target.homeDir, '.config', 'systemd', 'user', UNIT_NAME)
    : join('/etc/systemd/system', UNIT_NAME);
}

/**
 * Whether the installed unit (user or system, whichever exists) delegates its cgroup, for doctor.
 *
 * @returns undefined when no baton unit is installed.
 */
export async function installedUnitDelegation(
  homeDir: string,
): Promise<{ path: string; user: boolean; delegate: boolean } | undefined> {
  for (const user of [true, false]) {
    const path = unitPath({ user, homeDir });
    const text = await readFile(path, 'utf8').catch(() => undefined);
    if (text !== undefined) return { path, user, delegate: /^\s*Delegate\s*=\s*(yes|true|on|1)\s*$/im.test(text) };
  }
  return undefined;
}
