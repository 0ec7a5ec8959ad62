/**
 * The buttons under a `quota_exhausted` outcome: Run at reset (the same task on the same vendor,
 * queued until the plan's reset the run recorded) and Run on … (the same task on another
 * installed vendor, now). Both launch a new run, not a resume: the session is the exhausted one's.
 */
import type { InboundPress } from '../../channels/types.js';
import { isBatonError } from '../../core/errors.js';
import { isRunId, type RunId } from '../../core/ids.js';
import { VENDOR_NAMES, type VendorName } from '../../core/vendor-name.js';
import type { RunRow } from '../../store/schema.js';
import { AGENTS_DISABLED } from '../../wording/dispatch.js';
import { BUTTON_GONE } from '../../wording/presses.js';
import { runAtResetAnswer, runOnAnswer } from '../../wording/quota.js';
import type { LaunchOptions } from '../command.js';
import type { DispatchContext } from '../context.js';
import { inConversation, RUN_NOT_KNOWN, type PressAnswer } from './outcome.js';
import { messageOf } from './resume.js';

/**
 * The options a relaunch of `run` carries: its wall clock, progress, token cap and place (the
 * checkout its worktree came from, with a new worktree); on the same vendor also its model,
 * posture and claude caps, which mean nothing to another CLI.
 */
export function relaunchOptionsOf(run: RunRow, sameVendor: boolean): LaunchOptions {
  const o = run.options;
  const inWorktree = run.branch !== null && run.sourceRoot !== null;
  return {
    in: inWorktree ? (run.sourceRoot as string) : run.cwd,
    ...(inWorktree ? { worktree: true } : {}),
    timeoutMinutes: o.timeoutMinutes,
    progress: o.progress,
    ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
    ...(sameVendor
      ? {
          ...(o.model ? { model: o.model } : {}),
          ...(o.sandbox ? { posture: o.sandbox } : {}),
          ...(o.budgetUsd !== undefined ? { budgetUsd: o.budgetUsd } : {}),
          ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
        }
      : {}),
  };
}

/** The `quota_exhausted` run a press names in its arg (`<run id>` or `<run id>:<vendor>`), in this conversation. */
async function exhaustedRun(ctx: DispatchContext, press: InboundPress, runId: string): Promise<RunRow | undefined> {
  const run = isRunId(runId) ? await ctx.deps.store.runs.getRun(runId) : undefined;
  return run && inConversation(press, run) && run.reason === 'quota_exhausted' ? run : undefined;
}

/** Launches `run`'s task again as `vendor`; a refusal is the answer. */
async function relaunch(
  ctx: DispatchContext,
  press: InboundPress,
  run: RunRow,
  vendor: VendorName,
  options: LaunchOptions,
  answer: (runId: RunId) => string,
): Promise<PressAnswer> {
  if (!ctx.config.harness.enabled) return AGENTS_DISABLED;
  try {
    const runId = await ctx.launch(vendor, options, run.task, messageOf(press, run.task));
    return { text: answer(runId), done: true };
  } catch (err) {
    if (!isBatonError(err)) throw err;
    return err.message.slice(0, 190);
  }
}

/** Run at reset: the task again on its vendor, queued until the reset its run recorded. */
export async function pressRunAtReset(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const run = await exhaustedRun(ctx, press, press.arg);
  if (!run) return RUN_NOT_KNOWN;
  const options = relaunchOptionsOf(run, true);
  if (run.quotaResetsAt) options.notBefore = run.quotaResetsAt;
  return relaunch(ctx, press, run, run.vendor, options, runAtResetAnswer);
}

/** Run on …: the task again, now, on the vendor the button names (one installed here). */
export async function pressRunOn(ctx: DispatchContext, press: InboundPress): Promise<PressAnswer> {
  const cut = press.arg.lastIndexOf(':');
  const vendor = VENDOR_NAMES.find((name) => name === press.arg.slice(cut + 1));
  const run = cut > 0 ? await exhaustedRun(ctx, press, press.arg.slice(0, cut)) : undefined;
  if (!run) return RUN_NOT_KNOWN;
  if (!vendor || !ctx.deps.vendors.has(vendor)) return BUTTON_GONE;
  return relaunch(ctx, press, run, vendor, relaunchOptionsOf(run, false), (id) => runOnAnswer(id, vendor));
}
