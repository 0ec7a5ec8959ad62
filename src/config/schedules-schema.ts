/**
 * The `[schedules]` table of `config.toml`: the time zone a schedule's times are read in and what
 * happens to slots missed while every node was down. Built from schema.ts's key helper, handed
 * in, so that this file does not import schema.ts back.
 */
import { z } from 'zod';

/** The key helper of schema.ts this section is built with. */
export interface SchedulesKeyHelpers {
  documented<T extends z.ZodType>(schema: T, type: string, description: string): T;
}

/** The `[schedules]` table's schema. */
export function schedulesSectionOf({ documented }: SchedulesKeyHelpers) {
  return z.strictObject({
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
}
