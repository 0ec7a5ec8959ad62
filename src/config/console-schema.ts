/**
 * The `[console]` table of `config.toml`: where else the web console listens.
 */
import { z } from 'zod';
import { documented } from './key-docs.js';

/** The `[console]` table's schema. */
export const consoleSection = z.strictObject({
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
