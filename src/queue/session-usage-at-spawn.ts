/** A queued resume's session totals when it spawns, read from its parent's row. */
import type { Logger } from '../core/logger.js';
import type { RunRow, UsageJson } from '../store/schema.js';
import { sessionUsageOf } from './session-usage.js';

/**
 * A queued resume's session totals before it, read from its parent's row when it spawns (the
 * row's own copy is not trusted). A database failure is logged and the run is charged the
 * session's totals as the CLI reports them, which can only over-count. Never throws.
 */
export async function sessionUsageAtSpawn(
  store: { runs: { getRun(id: string): Promise<RunRow | undefined> } },
  logger: Logger,
  parent: RunRow,
): Promise<UsageJson | undefined> {
  try {
    return await sessionUsageOf(store, parent);
  } catch (err) {
    logger.warn(
      { err, parentRunId: parent.id },
      "could not read a resumed session's usage; the run is charged the session's totals",
    );
    return undefined;
  }
}
