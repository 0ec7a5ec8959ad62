import { readFile } from 'node:fs/promises';

/** Whether a process with this pid exists (signal 0: EPERM means it exists but is not ours). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * A token naming one process for its whole life: `bootId:startTime` from Linux procfs
 * (`/proc/sys/kernel/random/boot_id`; field 22 `starttime` of `/proc/<pid>/stat`, clock ticks
 * since boot, proc(5)). A pid reused after a crash or a reboot gets another token.
 *
 * @returns undefined when the process does not exist or procfs is unavailable (not Linux).
 */
export async function processToken(pid: number): Promise<string | undefined> {
  try {
    const [boot, stat] = await Promise.all([
      readFile('/proc/sys/kernel/random/boot_id', 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    // The command name (field 2) is in parentheses and may hold spaces: count fields after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTime = fields[19];
    return startTime ? `${boot.trim()}:${startTime}` : undefined;
  } catch {
    return undefined;
  }
}
