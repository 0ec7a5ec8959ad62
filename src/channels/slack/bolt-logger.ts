/**
 * Bolt's `Logger` interface (@slack/logger: debug/info/warn/error/setLevel/getLevel/setName) on
 * top of baton's pino logger, with every secret scrubbed from the text: Bolt and the Web API
 * client log request URLs, bodies and errors.
 */
import { LogLevel, type Logger as SlackLogger } from '@slack/bolt';
import type { Logger } from '../../core/logger.js';
import { redact } from './errors.js';

/** A Bolt logger writing to `logger` (child `{ channel: 'slack' }`); pino's level decides what is kept. */
export function boltLogger(logger: Logger, secrets: readonly string[]): SlackLogger {
  const child = logger.child({ channel: 'slack' });
  let level: LogLevel = LogLevel.DEBUG;
  const text = (parts: unknown[]): string => redact(parts.map(stringify).join(' '), secrets);
  return {
    // Never logged, at any level: @slack/socket-mode's debug lines hold every received event whole
    // and @slack/web-api's every API answer (a thread's messages), so a person's text, a task,
    // would reach the log at BATON_LOG_LEVEL=debug.
    debug: () => {},
    info: (...parts: unknown[]) => child.info(text(parts)),
    warn: (...parts: unknown[]) => child.warn(text(parts)),
    error: (...parts: unknown[]) => child.error(text(parts)),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName: () => {},
  };
}

function stringify(part: unknown): string {
  if (typeof part === 'string') return part;
  if (part instanceof Error) return `${part.name}: ${part.message}`;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part);
  }
}
