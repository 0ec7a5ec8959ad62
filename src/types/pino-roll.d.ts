// pino-roll ships no types; this declares the part baton uses (options from its README/JSDoc).
declare module 'pino-roll' {
  import type { DestinationStream } from 'pino';

  /** Options of pino-roll 4 (https://github.com/mcollina/pino-roll). */
  interface PinoRollOptions {
    /** Path without number; the number (and `extension`) is appended. */
    file: string;
    /** Rotate past this size: `'10m'`, `'1g'`, or a number of MB. */
    size?: string | number;
    frequency?: 'daily' | 'hourly' | number;
    extension?: string;
    /** Also maintain a `current.log` symlink to the file in use. */
    symlink?: boolean;
    mkdir?: boolean;
    /** File mode of new log files (a sonic-boom option). */
    mode?: number;
    limit?: { count?: number; removeOtherLogFiles?: boolean };
  }

  export default function pinoRoll(options: PinoRollOptions): Promise<DestinationStream & { end(): void }>;
}
