/**
 * The `[schedules]` table of `config.toml`: the time zone a schedule's times are read in and what
 * happens to slots missed while every node was down.
 */
import { z } from 'zod';
import { documented } from './key-docs.js';

/** The `[schedules]` table's schema. */
export const schedulesSection = z.strictObject({
  timezone: documented(
    z
      .string()
      .refine((zone) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: zone });
          return true;
        } catch {
          return false;
        }
      }, 'not an IANA time zone (e.g. "Europe/Berlin")')
      .optional(),
    'string',
    "IANA time zone a schedule's times are read in when it names none (tz:); unset: this machine's zone.",
  ),
  catch_up: documented(
    z.enum(['one', 'none']).default('one'),
    '"one" or "none"',
    'What a schedule does about slots missed while every node was down: "one" fires the latest of them once, saying how late; "none" fires none.',
  ),
});
