/** `/runs` (the recent runs, the outbox and the nodes) and `/runs ID` (one run). */
import { NO_SUCH_RUN } from '../../wording/dispatch.js';
import { scheduleTag } from '../../wording/schedules.js';
import type { RunRow } from '../../store/schema.js';
import type { InboundMessage } from '../../channels/types.js';
import { isRunId, type RunId } from '../../core/ids.js';
import { answer, type DispatchContext } from '../context.js';
import { ANSWERED, type DispatcherDeps, type DispatchResult } from '../deps.js';
import { formatRun, formatRunList, redeliverButtons } from '../run-views.js';

/** One run with its deliveries and approvals, or the answer that no such run is known. */
async function describeRun(deps: DispatcherDeps, id: string): Promise<string> {
  const run = isRunId(id) ? await deps.store.runs.getRun(id) : undefined;
  if (!run) return NO_SUCH_RUN;
  const schedule = await deps.schedules?.originOfRun(run.id);
  return formatRun(
    run,
    await deps.store.outbox.deliveriesOfRun(run.id as RunId),
    (await deps.approvals?.ofRun(run.id)) ?? [],
    undefined,
    schedule ? scheduleTag(schedule) : undefined,
  );
}

/** Run id → the tag of the schedule that started it, for the runs listed. */
async function originsOf(deps: DispatcherDeps, runs: readonly RunRow[]): Promise<Map<string, string>> {
  const origins = new Map<string, string>();
  for (const [runId, schedule] of (await deps.schedules?.originsOfRuns(runs.map((r) => r.id))) ?? [])
    origins.set(runId, scheduleTag(schedule));
  return origins;
}

/** `/runs` and `/runs ID`. */
export async function runsCommand(
  ctx: DispatchContext,
  command: { runId?: string },
  message: InboundMessage,
): Promise<DispatchResult> {
  const { deps } = ctx;
  if (command.runId) {
    return answer(ctx, message, describeRun(deps, command.runId));
  }
  const dead = await deps.store.outbox.deadLetters(5);
  const nodes = deps.nodes
    ? await deps.nodes().then((lines) => (lines.length > 1 ? `\n\nNodes:\n${lines.join('\n')}` : ''))
    : '';
  const recent = await deps.store.runs.recentRuns(10);
  await ctx.reply(
    message,
    formatRunList(recent, await deps.store.outbox.counts(), dead, undefined, await originsOf(deps, recent)) + nodes,
    redeliverButtons(dead),
  );
  return ANSWERED;
}
