import { pino, type Logger, type DestinationStream } from 'pino';

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
    },
    options.destination,
  );
}

/** A logger that drops everything, for tests that assert on state rather than logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
