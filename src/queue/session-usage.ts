/**
 * A resumed session's usage when a resume begins, so the run is charged its own tokens only
 * (codex reports a resumed session's totals; see harness/vendors/usage-figures.ts).
 */
import type { RunRow, UsageJson } from '../store/schema.js';

/** How far up a chain of resumes to look past runs whose usage is unknown. */
const MAX_ANCESTORS = 50;

/**
 * The session's totals as last recorded along `parent`'s chain: the parent's, or, when its
 * usage is unknown (it ended before the CLI reported any), the nearest ancestor's in the same
 * session. Reads the database only for such an ancestor.
 *
 * @returns the totals, or undefined when no run of the session recorded usage.
 * @throws the store's errors (database unavailable).
 */
export async function sessionUsageOf(
  store: { runs: { getRun(id: string): Promise<RunRow | undefined> } },
  parent: RunRow,
): Promise<UsageJson | undefined> {
  let run: RunRow | undefined = parent;
  for (let hops = 0; run && run.vendorSessionId === parent.vendorSessionId && hops < MAX_ANCESTORS; hops++) {
    if (run.usage) return run.usage.session ? { ...run.usage.session } : { ...run.usage };
    if (!run.parentRunId) return undefined;
    run = await store.runs.getRun(run.parentRunId);
  }
  return undefined;
}
