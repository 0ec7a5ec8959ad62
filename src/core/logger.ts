import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { multistream, pino, stdSerializers, type DestinationStream, type Level, type Logger } from 'pino';

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
 * (enumerable only with its `debug` option). Nothing of either may reach a log line (issue #18).
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
    options.destination,
  );
}

/** Rotation of the service's log file. */
export const LOG_FILE_ROTATION = { sizeMb: 10, keepFiles: 5 } as const;

/**
 * The service logger: JSON lines to stdout and to `logsDir/baton.N.log`, rotated at
 * {@link LOG_FILE_ROTATION} sizes (pino-roll keeps `current.log` pointing at the live file).
 *
 * @returns the logger and a `close()` that flushes the file.
 */
export async function createServiceLogger(level: string, logsDir: string): Promise<{ logger: Logger; close(): void }> {
  const { default: pinoRoll } = await import('pino-roll');
  await mkdir(logsDir, { recursive: true, mode: 0o700 });
  const file = await pinoRoll({
    mode: 0o600,
    file: join(logsDir, 'baton'),
    extension: '.log',
    size: `${LOG_FILE_ROTATION.sizeMb}m`,
    limit: { count: LOG_FILE_ROTATION.keepFiles },
    symlink: true,
    mkdir: true,
  });
  const streamLevel = (level === 'silent' ? 'fatal' : level) as Level;
  const logger = pino(
    { level, base: { service: 'baton' }, redact: { paths: [...REDACTED_LOG_PATHS], censor: '[redacted]' }, serializers: { err: serializeError } },
    multistream([{ stream: process.stdout, level: streamLevel }, { stream: file, level: streamLevel }]),
  );
  return { logger, close: () => file.end() };
}

/** A logger that drops everything, for tests that assert on state rather than logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
