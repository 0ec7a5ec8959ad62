/**
 * The service's rotated log file: `dir/baton.N.log`, a new N past a size, the oldest removed,
 * `dir/current.log` a symlink to the file in use. Written through pino's own sonic-boom
 * destination; replaces pino-roll, whose date helpers (date-fns, ~300 CommonJS modules, ~80 ms
 * of start-up and ~5 MB RSS, measured for issue #15) baton never used: it rotates by size only.
 */
import { readdirSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pino, type DestinationStream } from 'pino';
import type { Logger } from 'pino';

/** Options of {@link openRotatingLogFile}. */
export interface RotatingLogFileOptions {
  /** Directory of the files (created 0700 when missing). */
  dir: string;
  /** File name before the number, e.g. `baton` for `baton.3.log`. */
  baseName: string;
  /** Size past which the next write goes to a new file, in bytes. */
  maxBytes: number;
  /** Files kept besides the one in use; older numbers are removed at each rotation. */
  keepFiles: number;
  /** Mode of new files. @default 0o600 */
  mode?: number;
}

/** A log destination for pino (`write`), with `end()` to flush and close. */
export interface RotatingLogFile extends DestinationStream {
  /** Path of the file in use (the new one once a rotation has reopened it). */
  current(): string;
  end(): void;
}

const LINK_NAME = 'current.log';

/**
 * Opens the newest `baseName.N.log` in `dir` for appending (N = 1 when none), counting its size,
 * and points `current.log` at it.
 *
 * @param logger - where a failed rotation or removal is reported (the log file itself may be what failed). @default stderr
 * @throws Error from the file system when `dir` cannot be created.
 */
export async function openRotatingLogFile(options: RotatingLogFileOptions, logger?: Pick<Logger, 'error'>): Promise<RotatingLogFile> {
  const { dir, baseName, maxBytes, keepFiles } = options;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const pattern = new RegExp(`^${baseName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.(\\d+)\\.log$`);
  const numbers = (): number[] => readdirSync(dir).flatMap((name) => {
    const match = pattern.exec(name);
    return match ? [Number(match[1])] : [];
  });
  const fileOf = (n: number): string => join(dir, `${baseName}.${n}.log`);
  let number = Math.max(1, ...numbers());
  let size = sizeOf(fileOf(number));
  const report = (err: unknown, what: string): void => {
    if (logger) logger.error({ err, dir }, what);
    else process.stderr.write(`baton: ${what}: ${err instanceof Error ? err.message : String(err)}\n`);
  };
  const link = (): void => {
    const path = join(dir, LINK_NAME);
    try {
      unlinkSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    symlinkSync(`${baseName}.${number}.log`, path);
  };
  const destination = pino.destination({ dest: fileOf(number), append: true, mkdir: false, sync: false, mode: options.mode ?? 0o600 });
  link();
  let rotating = false;
  const rotate = (): void => {
    rotating = true;
    const next = number + 1;
    // Lines written meanwhile stay in sonic-boom's buffer and go to the next file.
    destination.flush((flushErr) => {
      if (flushErr) report(flushErr, 'could not flush the log file before rotating it');
      try {
        destination.reopen(fileOf(next));
        number = next;
        size = 0;
        link();
        for (const old of numbers()) if (old < number - keepFiles) unlinkSync(fileOf(old));
      } catch (err) {
        report(err, 'log file rotation failed');
      } finally {
        rotating = false;
      }
    });
  };
  // Bytes count when sonic-boom has written them to the open file (it buffers while a file
  // opens or a write is in flight), so each file is cut after what was really written to it.
  destination.on('write', (bytes: number) => {
    size += bytes;
    if (size >= maxBytes && !rotating) rotate();
  });
  return {
    write: (chunk: string): void => void destination.write(chunk),
    current: () => fileOf(number),
    end: () => destination.end(),
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw err;
  }
}
