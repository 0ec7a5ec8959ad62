/**
 * The `[run hr_…]` tag that starts every message about a run. A reader dedupes on it and a reply
 * finds its run by it, so it is built here and nowhere else.
 *
 * @param runId - the run's id, `hr_…`.
 * @returns `[run hr_…]`, with no trailing space.
 */
export function runTag(runId: string): string {
  return `[run ${runId}]`;
}

/**
 * Where a run is, as messages show it: `node:cwd` for a run routed to another node than the one
 * that received it, else its cwd alone (single-node messages do not change).
 */
export function runPlace(run: { cwd: string; node?: string | null; origin?: { node?: string } }): string {
  return run.node && run.origin?.node && run.node !== run.origin.node ? `${run.node}:${run.cwd}` : run.cwd;
}
