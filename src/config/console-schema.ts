/**
 * The `[console]` table of `config.toml`: where else the web console listens. Built from
 * schema.ts's key helper, handed in, so that this file does not import schema.ts back.
 */
import { z } from 'zod';

/** The key helper of schema.ts this section is built with. */
export interface ConsoleKeyHelpers {
  documented<T extends z.ZodType>(schema: T, type: string, description: string): T;
}

/** The `[console]` table's schema. */
export function consoleSectionOf({ documented }: ConsoleKeyHelpers) {
  return z.strictObject({
    listen: documented(
      z
        .string()
        .regex(
          /^(?!0\.0\.0\.0:|\[::\]:)(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]*):\d{1,5}$/,
          'HOST:PORT with the address the browser uses (e.g. "192.168.1.5:8443"), not a wildcard such as 0.0.0.0',
        )
        .optional(),
      'string',
      'One more address the web console listens on, as HOST:PORT, behind the same login as on 127.0.0.1; its pages answer only when the browser names this HOST:PORT. Unset: 127.0.0.1 only.',
    ),
  });
}
