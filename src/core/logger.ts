import { lstat, mkdir, readlink, symlink, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { multistream, pino, stdSerializers, type DestinationStream, type Level, type Logger } from 'pino';
import { secretScrubber } from './secret-scrub.js';

export type { Logger } from 'pino';

/**
 * Paths pino removes from every log record. Tokens and connection strings must never reach a
 * log line (STYLE.md, "Errors"); callers also never log env objects whole.
 */
export const REDACTED_LOG_PATHS: readonly string[] = [
  'token',
  '*.token',
  'env',
  '*.env',
  'databaseUrl',
  '*.databaseUrl',
  'headers.authorization',
  '*.headers.authorization',
];

/** What stands in a log line where a failed query's parameters were. */
const WITHHELD = 'params: [withheld]';

/**
 * pino's error serializer, minus the bound parameters of failed queries. drizzle-orm (0.45)
 * wraps a database error as `DrizzleQueryError` whose message, stack and enumerable `params` hold
 * every parameter: a task's full text, a chat message. postgres.js keeps `parameters` too
 * (enumerable only with its `debug` option). Nothing of either may reach a log line.
 */
export function serializeError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  return scrub(stdSerializers.err(err), withheldParams(err), 0);
}

/**
 * An error's message for a log line or a state text, with a failed query's parameters withheld
 * (see {@link serializeError}): for code that flattens an error to a string before logging it.
 */
export function safeErrorMessage(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  return scrub(err.message, withheldParams(err), 0) as string;
}

/** `params: …` texts of the failed queries in `err`'s cause chain (drizzle's message format). */
function withheldParams(err: Error): string[] {
  const withheld: string[] = [];
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    const params = (e as { params?: unknown }).params;
    if (Array.isArray(params) && params.length > 0) withheld.push(`params: ${params.join(',')}`);
  }
  return withheld;
}

function scrub(value: unknown, withheld: readonly string[], depth: number): unknown {
  if (typeof value === 'string') return withheld.reduce((text, params) => text.split(params).join(WITHHELD), value);
  if (typeof value !== 'object' || value === null || depth > 10) return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, withheld, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === 'params' || key === 'parameters') continue;
    out[key] = scrub(item, withheld, depth + 1);
  }
  return out;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** pino level name. @default 'info' */
  level?: string;
  /** Where records go. @default stdout */
  destination?: DestinationStream;
  /**
   * Secret values (tokens, passwords: `secretValues(env)`) removed from every line, wherever they
   * sit in it (see {@link secretScrubber}). @default none
   */
  secrets?: readonly string[];
}

/**
 * `destination` with every line scrubbed of `secrets` before it is written. By value and on the
 * finished line, so no field name, nesting or SDK error shape can carry one past it: a grammY
 * network error quotes its request URL, bot token included, in a nested error's message and stack.
 */
export function scrubbingStream(destination: DestinationStream, secrets: readonly string[]): DestinationStream {
  if (secrets.length === 0) return destination;
  const scrub = secretScrubber(secrets);
  return { write: (line: string) => destination.write(scrub(line)) };
}

/** Makes the structured logger every component receives through its deps. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    {
      level: options.level ?? 'info',
      base: { service: 'baton' },
      redact: { paths: [...REDACTED_LOG_PATHS], censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    options.secrets?.length
      ? scrubbingStream(options.destination ?? process.stdout, options.secrets)
      : options.destination,
  );
}

/** Rotation of the service's log file. */
export const LOG_FILE_ROTATION = { sizeMb: 10, keepFiles: 5 } as const;

/** Start-up log lines kept in memory for the file until it is open, in bytes (1 MiB). */
export const PENDING_LOG_LIMIT_BYTES = 1_048_576;

/**
 * What pino-roll 4 returns, as used here: a SonicBoom (sonic-boom 4, index.js) whose `fd` is -1
 * until its file is open, then 'ready' (again after each rotation's reopen, with `file` the new
 * path); a failed open, write or rotation emits 'error'; `end()` flushes, then 'close'.
 */
interface RolledFile {
  fd: number;
  file: string;
  write(line: string): boolean;
  end(): void;
  once(event: 'ready' | 'error' | 'close', listener: (err?: Error) => void): unknown;
  on(event: 'ready' | 'error', listener: (err?: Error) => void): unknown;
}

/** How long {@link ServiceLogger.close} waits for the file's last writes, in ms. */
const CLOSE_FLUSH_MS = 5_000;

/** The service logger of {@link createServiceLogger}. */
export interface ServiceLogger {
  logger: Logger;
  /**
   * Opens the rotated log file and writes to it, in order, every line logged before; from then
   * on lines go to stdout and the file together. Called once `baton ready` is printed: loading
   * pino-roll costs ~80–110 ms of the main thread (its date-fns, measured on the 2-core bench
   * machine, 2026-12-02), which the start no longer waits for. Idempotent.
   *
   * @throws what opening the file threw, after logging it (to stdout): lines then go to stdout only.
   */
  openFile(): Promise<void>;
  /**
   * Opens the file if it is not open yet (so start-up lines are kept), ends it and waits (at most
   * 5 s) until its last lines are written: the process may exit right after. Never rejects.
   */
  close(): Promise<void>;
}

/**
 * The service logger: JSON lines to stdout and to `logsDir/baton.N.log`, rotated at
 * {@link LOG_FILE_ROTATION} sizes, with `current.log` a symlink to the live file. The file opens
 * with {@link ServiceLogger.openFile}; until then its lines wait in memory (at most
 * {@link PENDING_LOG_LIMIT_BYTES}; from the first line past that, lines go to stdout only, and
 * the file says how many). No failure of the file ends the service: it is logged to stdout, and a
 * failed open or write leaves stdout the only destination until a restart.
 *
 * @throws the `mkdir` error when `logsDir` cannot be made (EACCES, ENOTDIR…), before any line.
 */
export async function createServiceLogger(
  level: string,
  logsDir: string,
  secrets: readonly string[] = [],
): Promise<ServiceLogger> {
  await mkdir(logsDir, { recursive: true, mode: 0o700 });
  const pending: string[] = [];
  let pendingBytes = 0;
  let dropped = 0;
  let file: RolledFile | undefined;
  /** No more lines for the file: it failed, or it was closed. */
  let done = false;
  const toFile = {
    write(line: string): void {
      if (file) file.write(line);
      else if (done) return;
      else {
        const bytes = Buffer.byteLength(line);
        if (dropped === 0 && pendingBytes + bytes <= PENDING_LOG_LIMIT_BYTES) {
          pending.push(line);
          pendingBytes += bytes;
        } else dropped += 1; // the file keeps a gapless start: nothing after the first line dropped
      }
    },
  };
  const logger = toStdoutAndFile(level, toFile, secrets);
  const currentLink = join(logsDir, 'current.log');
  const linkCurrent = (target: string): Promise<void> => linkCurrentLog(logger, currentLink, target);
  let opening: Promise<void> | undefined;
  let closing: Promise<void> | undefined;
  const openFile = (): Promise<void> =>
    (opening ??= (async () => {
      try {
        const opened = await rollLogFile(logsDir);
        // Every 'error' is heard (one unheard would end the process). A failed write or reopen
        // ends the file; a failed removal of an old rotated file is a warning.
        opened.on('error', (err?: Error) => {
          if (file !== opened) return; // before the open succeeded: rejected below
          const syscall = (err as NodeJS.ErrnoException | undefined)?.syscall;
          if (syscall === 'unlink' || syscall === 'readdir' || syscall === 'stat') {
            logger.warn({ err, logsDir }, 'could not remove an old rotated log file');
            return;
          }
          file = undefined;
          done = true;
          logger.error(
            { err, logsDir },
            'writing the log file failed; logs go to stdout only from here (free space or fix the directory, then restart baton)',
          );
        });
        await untilOpen(opened);
        // One synchronous block: no line can slip between the kept ones and the live ones.
        for (const line of pending) opened.write(line);
        pending.length = 0;
        pendingBytes = 0;
        file = opened;
        if (dropped > 0)
          logger.warn(
            { dropped },
            `${dropped} start-up log lines are on stdout only: more than ${PENDING_LOG_LIMIT_BYTES} bytes were logged before this file opened`,
          );
        await linkCurrent(opened.file);
        opened.on('ready', () => void linkCurrent(opened.file)); // each rotation reopens
      } catch (err) {
        done = true;
        pending.length = 0;
        logger.error(
          { err, logsDir },
          'could not open the log file; logs go to stdout only (check that baton may write this directory)',
        );
        throw err;
      }
    })());
  return {
    logger,
    openFile,
    // One close for every caller: a second call made while the first flushes waits for it too.
    close: () =>
      (closing ??= (async () => {
        await openFile().catch(() => undefined); // openFile logged its failure
        const ending = file;
        file = undefined;
        done = true; // a line logged from here on goes to stdout only, never to an ended stream
        if (ending) await endLogFile(ending, logger, logsDir);
      })()),
  };
}

/** The service's pino logger: each line to stdout and to `toFile`, both scrubbed of `secrets`. */
function toStdoutAndFile(level: string, toFile: DestinationStream, secrets: readonly string[]): Logger {
  const streamLevel = (level === 'silent' ? 'fatal' : level) as Level;
  return pino(
    {
      level,
      base: { service: 'baton' },
      redact: { paths: [...REDACTED_LOG_PATHS], censor: '[redacted]' },
      serializers: { err: serializeError },
    },
    multistream([
      { stream: scrubbingStream(process.stdout, secrets), level: streamLevel },
      { stream: scrubbingStream(toFile, secrets), level: streamLevel },
    ]),
  );
}

/** Points `currentLink` (`current.log`) at `target` (a file in its directory); a failure is a warning, never fatal. */
async function linkCurrentLog(logger: Logger, currentLink: string, target: string): Promise<void> {
  try {
    const existing = await lstat(currentLink).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (existing && !existing.isSymbolicLink()) {
      logger.warn(
        { path: currentLink },
        'current.log is not a symlink; left as it is (remove it to have it point at the live log file)',
      );
      return;
    }
    if (existing && (await readlink(currentLink)) === basename(target)) return;
    if (existing) await unlink(currentLink);
    await symlink(basename(target), currentLink);
  } catch (err) {
    logger.warn({ err, path: currentLink }, 'could not point current.log at the live log file');
  }
}

/** pino-roll's rotated `logsDir/baton.N.log`, loaded on first use; possibly not open yet ({@link untilOpen}). */
async function rollLogFile(logsDir: string): Promise<RolledFile> {
  const { default: pinoRoll } = await import('pino-roll');
  // symlink: false: pino-roll's own symlink call can throw after it has begun opening the
  // file, before anything could listen for that open's 'error'. current.log is kept here.
  return (await pinoRoll({
    mode: 0o600,
    file: join(logsDir, 'baton'),
    extension: '.log',
    size: `${LOG_FILE_ROTATION.sizeMb}m`,
    limit: { count: LOG_FILE_ROTATION.keepFiles },
    symlink: false,
    mkdir: true,
  })) as unknown as RolledFile;
}

/**
 * Resolves once `opened` is open. pino-roll hands back its SonicBoom before the file is open.
 *
 * @throws the error a failed open emits.
 */
function untilOpen(opened: RolledFile): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (opened.fd >= 0) return resolve();
    opened.once('ready', () => resolve());
    opened.once('error', reject);
  });
}

/** Ends `ending` and waits until its last lines are written, at most {@link CLOSE_FLUSH_MS}; never rejects. */
function endLogFile(ending: RolledFile, logger: Logger, logsDir: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, CLOSE_FLUSH_MS);
    const settle = (err?: Error): void => {
      clearTimeout(timer);
      if (err) logger.error({ err, logsDir }, "the log file's last lines could not be written");
      resolve();
    };
    ending.once('close', () => settle());
    ending.once('error', settle);
    ending.end();
  });
}

/** A logger that drops everything, for tests that assert on state rather than logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
