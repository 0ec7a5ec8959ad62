/** A launch for another node of the fleet. */
import { imagesToOtherNodeText } from '../../wording/launch-gates.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { newRunId, type RunId } from '../../core/ids.js';
import type { Route } from '../../fleet/route.js';
import { sessionUsageOf } from '../../queue/session-usage.js';
import type { QueuedLaunchJson } from '../../store/schema.js';
import { wordLaunchRefusal } from '../../wording/launch-refusals.js';
import { remoteApprovalRule } from './approvals.js';
import type { LaunchContext } from './context.js';
import * as plan from './plan.js';
import { incomingFiles } from './shared.js';
import { verifyPlanOf } from './verify-plan.js';

/**
 * A launch for another node: written `queued` for that node with what it
 * starts with; nothing here touches the disk the run will use. The owning node resolves the
 * directory against its own roots, makes the worktree and claims the run within its
 * `max_active` (its queue runner), or ends it `failed` with the reason.
 *
 * Tool approvals and images are refused: an approval token lives only in the memory of the
 * process that spawns (see {@link remoteApprovalRule}), and an image is a file on this node's
 * disk. Text files travel inline in the prompt.
 *
 * @throws BatonError `approvals_unavailable`, `attachment_refused`, `queue_full`, `duplicate_inbound`.
 */
export async function launchRemote(
  ctx: LaunchContext,
  route: Extract<Route, { kind: 'remote' }>,
  ask: plan.LaunchAsk,
): Promise<RunId> {
  const { vendor, options, task, message, parent } = ask;
  const { deps } = ctx;
  const { harness } = ctx.config;
  remoteApprovalRule(vendor, options, parent, route.node);
  const settings = plan.settingsOf(vendor, options, parent);
  const caps = plan.capsOf(vendor, options, harness, parent);
  const sessionUsageBefore = parent ? await sessionUsageOf(deps.store, parent) : undefined;
  const runId = (deps.newRunId ?? newRunId)();
  const incoming = incomingFiles(ctx, message);
  const scratch = join(deps.runsDir, runId);
  const attachments = incoming.length
    ? await ctx.downloads
        .download(incoming, join(scratch, 'attachments'), message, ctx.config.harness)
        .finally(() => rm(scratch, { recursive: true, force: true }))
    : [];
  if (attachments.some((a) => a.kind === 'image')) {
    throw new BatonError('attachment_refused', imagesToOtherNodeText(route.node));
  }
  const now = deps.clock.now();
  const verify = await verifyPlanOf(options, parent, [], []);
  const timeoutMinutes = plan.timeoutMinutesOf(options, parent, harness);
  const target = plan.conversationTarget(message);
  const launch: QueuedLaunchJson = {
    ...plan.vendorRequestOf(task, attachments, settings, caps, parent, sessionUsageBefore),
    timeoutMs: timeoutMinutes * 60_000,
    route: { target: route.path, worktree: !parent && options.worktree === true },
  };
  const run = {
    ...plan.runIdentityOf(runId, ask),
    status: 'queued' as const,
    cwd: route.path,
    // Until the owning node resolves it: unique to the target, never an active run's root.
    worktreeRoot: `${route.node}:${route.path}`,
    branch: parent?.branch ?? null,
    sourceRoot: parent?.sourceRoot ?? null,
    // The owning node's `[projects]` are not known here: only the message's or the parent's verify.
    options: {
      ...plan.runOptionsOf(timeoutMinutes, options, settings, false, caps),
      ...(verify ? { verify } : {}),
    },
    origin: plan.originOf(message, deps.fleet!.name),
    supervisor: deps.supervisor.supervisorId,
    node: route.node,
    // Only that process of the node claims it: another that took the same name never does.
    nodeInstance: route.instance ?? null,
    launch,
    createdAt: now,
  };
  const body =
    plan
      .startedBodyOf(run, parent, task, message, attachments)
      .replace('] started · ', `] sent to node ${route.node} · `) +
    `
Node ${route.node} starts it when it has a free slot; /cancel to drop it.`;
  const started = await deps.store.launches
    .createRoutedRun(
      run,
      { runId, kind: 'started', target: { ...target, replyToMessageId: message.messageId }, body },
      harness.maxQueued,
      now,
      { platform: message.platform, dedupeKey: message.dedupeKey },
    )
    .catch((err: unknown) => {
      throw wordLaunchRefusal(err);
    });
  deps.logger.info({ runId, vendor, node: route.node, cwd: route.path }, 'run routed to another node');
  await deps.outbox.attempt(started);
  return runId;
}
