/** A launch on this node: gates, workspace, worktree, files, the run row, then the process. */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BatonConfig } from '../../config/index.js';
import { BatonError } from '../../core/errors.js';
import { newRunId, type RunId } from '../../core/ids.js';
import type { Route } from '../../fleet/route.js';
import { newApprovalToken } from '../../harness/approvals.js';
import type { StoredAttachment } from '../../harness/attachments.js';
import { VENDOR_FACTS, type LaunchRequest } from '../../harness/vendors/types.js';
import type { RunWorktree } from '../../harness/worktrees.js';
import { resolveWorkspace, type ResolvedWorkspace } from '../../harness/workspace.js';
import { discardWorktree, worktreeFor } from '../../queue/run-worktree.js';
import { sessionUsageOf } from '../../queue/session-usage.js';
import { workspaceSettingsOf } from '../../queue/workspace-settings.js';
import type { QueuedLaunchJson } from '../../store/schema.js';
import type { UsageJson, VerifyPlanJson } from '../../types/run-facts.js';
import { wordLaunchRefusal } from '../../wording/launch-refusals.js';
import { harnessWords } from '../../wording/harness.js';
import { queuedText } from '../../wording/runs.js';
import { vendorMissingText } from '../refusal-text.js';
import { assertWorktreeThere } from '../worktree-gone.js';
import { queuedUntilResetText } from '../../wording/quota.js';
import { localApprovalRule } from './approvals.js';
import { quotaWaitOf } from './quota-gate.js';
import type { RunCaps } from './caps.js';
import type { LaunchContext } from './context.js';
import {
  capsOf,
  conversationTarget,
  originOf,
  runIdentityOf,
  runOptionsOf,
  settingsOf,
  startedBodyOf,
  timeoutMinutesOf,
  vendorRequestOf,
  type LaunchAsk,
  type RunSettings,
} from './plan.js';
import { incomingFiles } from './shared.js';
import { verifyPlanOf } from './verify-plan.js';

/** What one local launch asks for; `harness` is the `[harness]` config as the launch began. */
export interface LocalLaunch extends LaunchAsk {
  harness: BatonConfig['harness'];
}

/** What the gates of a local launch decided, before anything is written. */
interface Prepared {
  resolved: ResolvedWorkspace;
  settings: RunSettings;
  approve: boolean;
  approvalToken: ReturnType<typeof newApprovalToken> | undefined;
  caps: RunCaps;
  sessionUsageBefore: UsageJson | undefined;
  verify: VerifyPlanJson | undefined;
  /** The run waits queued until then: its vendor's plan resets ({@link quotaWaitOf}). */
  notBefore: Date | undefined;
}

/** Where the run goes and with which files, once it has an id. */
interface Placed {
  runId: RunId;
  worktree: RunWorktree | undefined;
  workspace: ResolvedWorkspace;
  branch: string | null;
  sourceRoot: string | null;
  attachments: StoredAttachment[];
}

/**
 * The gates of a local launch in their fixed order: the vendor on PATH, a resume's worktree, the
 * workspace, the posture, the approval decision ({@link localApprovalRule}), the caps, the
 * storage.
 */
async function prepare(
  ctx: LaunchContext,
  launch: LocalLaunch,
  target: string | undefined,
  conversationDefault: string | undefined,
): Promise<Prepared> {
  const { deps } = ctx;
  const { vendor, options, message, parent } = launch;
  const spans = ctx.spansOf(message);
  if (!deps.vendors.has(vendor)) {
    throw new BatonError('vendor_missing', vendorMissingText(vendor));
  }
  if (parent) await assertWorktreeThere(parent);
  const resolved = await resolveWorkspace(
    parent ? parent.cwd : target,
    conversationDefault,
    workspaceSettingsOf(ctx.config, deps),
  );
  spans?.mark('workspace');
  const settings = settingsOf(vendor, options, parent);
  const approve = localApprovalRule(vendor, options, parent, settings.posture, {
    hasBroker: deps.approvals !== undefined,
    platform: message.platform,
  });
  // claude asks in its first asking mode; codex asks through its approval policy, in any sandbox.
  if (approve) settings.posture ??= VENDOR_FACTS[vendor].askingPostures[0];
  const approvalToken = approve ? newApprovalToken() : undefined;
  const caps = capsOf(vendor, options, launch.harness, parent);
  const notBefore = await quotaWaitOf(ctx, launch, approve);
  const sessionUsageBefore = parent ? await sessionUsageOf(deps.store, parent) : undefined;
  const verify = await verifyPlanOf(options, parent, ctx.config.projectVerify, [
    resolved.cwd,
    ...(parent?.sourceRoot ? [parent.sourceRoot] : []),
  ]);
  await ctx.storageGate();
  spans?.mark('storage');
  return { resolved, settings, approve, approvalToken, caps, sessionUsageBefore, verify, notBefore };
}

/**
 * The run's id, its worktree (a resume runs in its parent's directory, which is its parent's
 * worktree when that had one) and its files, downloaded before the run exists so that a refused
 * file refuses the launch (owner only: only a launch downloads).
 */
async function place(ctx: LaunchContext, launch: LocalLaunch, resolved: ResolvedWorkspace): Promise<Placed> {
  const { deps } = ctx;
  const { options, message, parent } = launch;
  const runId = (deps.newRunId ?? newRunId)();
  const worktree = parent
    ? undefined
    : await worktreeFor(ctx.config, deps.worktreesDir, resolved.cwd, runId, options.worktree);
  ctx.spansOf(message)?.mark('worktree');
  const workspace = worktree ?? resolved;
  const branch = worktree?.branch ?? parent?.branch ?? null;
  const sourceRoot = worktree?.sourceRoot ?? parent?.sourceRoot ?? null;
  const attachmentsDir = join(deps.runsDir, runId, 'attachments');
  const incoming = incomingFiles(ctx, message);
  const attachments = incoming.length
    ? await ctx.downloads
        .download(incoming, attachmentsDir, message, ctx.config.harness)
        .catch(async (err: unknown) => {
          if (worktree) await discardWorktree(worktree, deps.logger);
          throw err;
        })
    : [];
  return { runId, worktree, workspace, branch, sourceRoot, attachments };
}

/** The run row and the request its process starts with. */
function rowOf(ctx: LaunchContext, launch: LocalLaunch, prepared: Prepared, placed: Placed) {
  const { deps } = ctx;
  const { options, task, message, parent } = launch;
  const { settings, approve, approvalToken, caps } = prepared;
  const { runId, workspace, attachments } = placed;
  const timeoutMinutes = timeoutMinutesOf(options, parent, launch.harness);
  const run = {
    ...runIdentityOf(runId, launch),
    status: 'starting' as const,
    cwd: workspace.cwd,
    worktreeRoot: workspace.worktreeRoot,
    branch: placed.branch,
    sourceRoot: placed.sourceRoot,
    options: {
      ...runOptionsOf(timeoutMinutes, options, settings, approve, caps),
      ...(prepared.verify ? { verify: prepared.verify } : {}),
    },
    ...(approvalToken ? { approvalTokenSha256: approvalToken.sha256 } : {}),
    origin: originOf(message, deps.fleet?.name),
    supervisor: deps.supervisor.supervisorId,
    ...(deps.fleet ? { node: deps.fleet.name, nodeInstance: deps.fleet.instance ?? null } : {}),
    createdAt: deps.clock.now(),
  };
  const { prompt, ...shared } = vendorRequestOf(task, attachments, settings, caps, parent, prepared.sessionUsageBefore);
  const request: LaunchRequest = {
    prompt,
    ...(attachments.some((a) => a.kind === 'image')
      ? { images: attachments.flatMap((a) => (a.kind === 'image' ? [{ path: a.path, mediaType: a.mediaType }] : [])) }
      : {}),
    ...shared,
  };
  return { run, request, timeoutMs: timeoutMinutes * 60_000 };
}

/**
 * The run row and its `started` message in one transaction; a run that cannot start now is
 * queued (unless it asks for approvals: its token is kept only in memory).
 */
async function record(ctx: LaunchContext, launch: LocalLaunch, prepared: Prepared, placed: Placed) {
  const { deps } = ctx;
  const { harness, task, message, parent } = launch;
  const { runId, worktree, workspace, attachments } = placed;
  const { run, request, timeoutMs } = rowOf(ctx, launch, prepared, placed);
  const target = conversationTarget(message);
  const startedBody = startedBodyOf(run, parent, task, message, attachments, placed.branch ?? undefined);
  const created = await deps.store.launches
    .createRun(
      run,
      (place) => ({
        runId,
        kind: 'started',
        target: { ...target, replyToMessageId: message.messageId },
        // A queued run is stopped with /cancel; Stop goes on a run that starts now.
        ...(place ? {} : { buttons: [{ label: harnessWords.buttons.stop, action: 'stop', arg: runId }] }),
        body: place?.notBefore
          ? queuedUntilResetText(startedBody, launch.vendor, place.notBefore)
          : place
            ? queuedText(startedBody, place)
            : startedBody,
      }),
      { node: harness.maxActive, fleet: ctx.config.node.fleetMaxActive },
      run.createdAt,
      { platform: message.platform, dedupeKey: message.dedupeKey },
      // A run that asks for approvals is never queued: its approval token is kept only in memory.
      harness.queue && !prepared.approve
        ? {
            maxQueued: harness.maxQueued,
            launch: {
              ...request,
              images: request.images ? [...request.images] : undefined,
              timeoutMs,
            } as QueuedLaunchJson,
            ...(prepared.notBefore ? { notBefore: prepared.notBefore } : {}),
          }
        : undefined,
      // The worktree is this run's from here: its launch snapshot begins while the commit travels.
      () => deps.supervisor.beginLaunchSnapshot(runId, workspace.cwd),
    )
    .catch(async (err: unknown) => {
      // A snapshot begun in the transaction takes the run directory with it once its git ends.
      if (!(await deps.supervisor.dropLaunchSnapshot(runId)) && attachments.length > 0)
        await rm(join(deps.runsDir, runId), { recursive: true, force: true });
      if (worktree) await discardWorktree(worktree, deps.logger);
      throw wordLaunchRefusal(err);
    });
  ctx.spansOf(message)?.mark('run_row');
  return { created, request, timeoutMs };
}

/**
 * Launch gates in their fixed order (trust was checked by the caller), then the run row and
 * its `started` message in one transaction, then the background process. A resume keeps the
 * parent's cwd and repeats its model and sandbox, which codex does not remember.
 *
 * @throws BatonError for every refused gate; `duplicate_inbound` for an event already launched.
 */
export async function launchLocal(
  ctx: LaunchContext,
  route: Extract<Route, { kind: 'local' }>,
  launch: LocalLaunch,
  conversationDefault: string | undefined,
): Promise<RunId> {
  const { deps } = ctx;
  const { vendor, message, parent } = launch;
  const spans = ctx.spansOf(message);
  const prepared = await prepare(ctx, launch, route.target, conversationDefault);
  const placed = await place(ctx, launch, prepared.resolved);
  const { runId, workspace } = placed;
  const { created, request, timeoutMs } = await record(ctx, launch, prepared, placed);
  const { run: stored, ...started } = created;
  if (started.queued) {
    // A transaction run again may have begun the snapshot on its first try, then queued the run.
    deps.supervisor.discardLaunchSnapshot(runId);
    deps.logger.info(
      { runId, vendor, cwd: workspace.cwd, behind: started.queued.behind, ahead: started.queued.ahead },
      'run queued',
    );
    await deps.outbox.attempt(started);
    // The slot may have freed between the check and now (a run ended on another process).
    await ctx.startQueued();
    return runId;
  }
  deps.logger.info(
    { runId, vendor, cwd: workspace.cwd, parentRunId: parent?.id, ...(spans ? { spansMs: spans.toJSON() } : {}) },
    'run launched',
  );
  const { approvalToken } = prepared;
  deps.supervisor.start(
    stored,
    approvalToken ? { ...request, approvalToken: approvalToken.token } : request,
    timeoutMs,
  );
  await deps.outbox.attempt(started);
  return runId;
}
