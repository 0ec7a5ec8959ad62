/**
 * Tool approvals of a run whose CLI asks over its own session (codex app-server): each ask goes
 * through the same {@link ApprovalBroker} as claude's permission-prompt server, so it gets the
 * same card, rule ("Allow for this run", see approval-scope.ts), timeout and database row.
 */
import type { RunRow } from '../store/schema.js';
import type { ApprovalBroker } from './approvals.js';
import type { ToolApprovalAsk } from './vendors/types.js';

/**
 * The approvals of one run: an ask waits, one long poll after another, until the owner decides,
 * the timeout denies, or the run is gone (denied).
 *
 * @returns a factory per run, for `SupervisorDeps.sessionApprovals`.
 */
export function sessionApprovals(
  broker: Pick<ApprovalBroker, 'request'>,
): (run: RunRow) => { ask(ask: ToolApprovalAsk): Promise<boolean> } {
  return (run) => ({
    async ask(ask) {
      for (;;) {
        const answer = await broker.request(run, { runId: run.id, ...ask });
        if (answer.state === 'decided') return answer.behavior === 'allow';
      }
    },
  });
}
