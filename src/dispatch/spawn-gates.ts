/**
 * The launch gates once more, read from the run's row, when a queued or routed run is about to
 * spawn. Such a run starts as its database row says, and the row is not the launch that met the
 * gates: the database is shared by every node of a fleet and by whoever can edit it, so a row is
 * untrusted input. Every gate a launch meets — consent, the vendor, the posture, the workspace
 * roots, the caps, the options the vendor takes — is checked here against the config as it
 * stands now, and the request the CLI gets is built from the checked fields only.
 */
import { realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import type { BatonConfig } from '../config/index.js';
import { BatonError } from '../core/errors.js';
import { VENDOR_FACTS, type LaunchRequest } from '../harness/vendors/types.js';
import { assertHoldsNoConfig, assertInsideRoots, isInside } from '../harness/workspace.js';
import { VENDOR_NAMES, type VendorName } from '../core/vendor-name.js';
import type { RunRow } from '../store/schema.js';
import { CODEX_BUDGET_REFUSAL, CODEX_TURNS_REFUSAL } from '../wording/commands.js';
import { MAX_BUDGET_USD, MAX_TIMEOUT_MINUTES, MAX_TOKENS, MAX_TURNS } from './command.js';
import { assertPosture } from './postures.js';

/** What the gates read besides the row. */
export interface SpawnGateContext {
  /** The config as it stands now (consent and roots apply live). */
  config: BatonConfig;
  /** The vendor CLIs found at start. */
  vendors: ReadonlyMap<VendorName, unknown>;
  /** `$BATON_HOME/harness/runs`: a run's images must be its own attachments there. */
  runsDir: string;
  /** Directories no run may contain or lie in (`$BATON_HOME`, the CLI homes). */
  protectedDirs: readonly string[];
  /** `$BATON_HOME/worktrees`, where run worktrees are made; unset: no run has one. */
  worktreesDir?: string | undefined;
}

/** What a checked row spawns with. */
export interface SpawnRequest {
  request: LaunchRequest;
  /** The run's wall clock, in ms. */
  timeoutMs: number;
}

/**
 * Keys of a queued launch (`runs.launch`) that a launch writes; `route` only until its node places it.
 * `sessionUsageBefore` is accepted but never passed on: the spawn reads it again from the parent's
 * row, since a row value would let an edit lower what a resume is charged.
 */
const LAUNCH_KEYS = new Set([
  'prompt',
  'images',
  'model',
  'posture',
  'resumeSessionId',
  'maxBudgetUsd',
  'maxTurns',
  'timeoutMs',
  'route',
  'sessionUsageBefore',
]);
/** A model name as a CLI flag value: no whitespace or control characters, never a flag itself. */
const MODEL_NAME = /^[^\s\p{Cc}-][^\s\p{Cc}]{0,199}$/u;
/** A vendor session id (codex and claude print UUIDs): never a flag, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/**
 * Checks every gate but the workspace one against a queued or routed run's row: consent, the
 * vendor, the posture, the caps (in range, consistent, none removed where `[harness]` sets a
 * default), and that the stored request holds only options a launch writes and the vendor takes.
 *
 * @throws BatonError `harness_disabled`, `not_approved`, `vendor_missing`, `posture_refused`,
 *   `usage` (a posture the vendor does not take), `approvals_unavailable`, `cap_missing`,
 *   `option_refused`.
 */
export function assertRowOptions(run: RunRow, context: SpawnGateContext): SpawnRequest {
  const vendor = assertConsentAndVendor(run, context);
  const options = run.options as Partial<RunRow['options']>;
  const launch = (run.launch ?? {
    prompt: run.task,
    timeoutMs: Number(options.timeoutMinutes) * 60_000,
  }) as unknown as Record<string, unknown>;
  const stored = assertStoredRequest(run, vendor, options, launch, context);
  const caps = assertRowCaps(vendor, options, launch, context.config.harness);
  const request: LaunchRequest = {
    prompt: stored.prompt,
    ...(stored.images !== undefined
      ? {
          images: (stored.images as { path: string; mediaType: string }[]).map(({ path, mediaType }) => ({
            path,
            mediaType,
          })),
        }
      : {}),
    ...(stored.model !== undefined ? { model: stored.model as string } : {}),
    ...(stored.posture !== undefined ? { posture: stored.posture as string } : {}),
    ...(stored.resume !== undefined ? { resumeSessionId: stored.resume as string } : {}),
    ...(caps.budgetUsd !== undefined ? { maxBudgetUsd: caps.budgetUsd } : {}),
    ...(caps.maxTurns !== undefined ? { maxTurns: caps.maxTurns } : {}),
  };
  return { request, timeoutMs: caps.timeoutMinutes * 60_000 };
}

/**
 * Consent as it stands now and a vendor whose CLI was found at start.
 *
 * @returns the row's vendor.
 * @throws BatonError `harness_disabled`, `not_approved`, `vendor_missing`.
 */
function assertConsentAndVendor(run: RunRow, context: SpawnGateContext): VendorName {
  const { harness } = context.config;
  if (!harness.enabled)
    throw new BatonError('harness_disabled', 'Coding agents are disabled on this machine ([harness] enabled = false).');
  if (!harness.approved) {
    throw new BatonError(
      'not_approved',
      'Coding agents are not approved on this machine any more. Approve with `baton approve` (or set [harness] approved = true), then send the command again.',
    );
  }
  const vendor = run.vendor;
  if (!(VENDOR_NAMES as readonly string[]).includes(vendor) || !context.vendors.has(vendor)) {
    throw new BatonError(
      'vendor_missing',
      `The ${String(vendor)} CLI was not found on PATH when baton started. Install it, then restart baton.`,
    );
  }
  return vendor;
}

/**
 * The stored request's keys, task, model, posture, approvals, resume session and images.
 *
 * @returns the checked fields (still as the row holds them).
 * @throws BatonError `option_refused`, `posture_refused`, `usage`, `approvals_unavailable`.
 */
function assertStoredRequest(
  run: RunRow,
  vendor: VendorName,
  options: Partial<RunRow['options']>,
  launch: Record<string, unknown>,
  context: SpawnGateContext,
): { prompt: string; model: unknown; posture: unknown; resume: unknown; images: unknown } {
  for (const key of Object.keys(launch)) {
    if (!LAUNCH_KEYS.has(key))
      throw refused(`The run's stored request carries ${JSON.stringify(key).slice(0, 60)}, which no launch writes`);
  }
  if (typeof launch.prompt !== 'string') throw refused('The run has no task text');

  const model = launch.model;
  if (model !== options.model || (model !== undefined && (typeof model !== 'string' || !MODEL_NAME.test(model))))
    throw refused("The run's model is not one a launch could have asked for");
  const posture = launch.posture;
  if (posture !== options.sandbox) throw refused("The run's posture differs from the one it was launched with");
  if (posture !== undefined) {
    if (typeof posture !== 'string') throw refused("The run's posture is not a name");
    assertPosture(vendor, posture);
  }
  // An approval token lives only in the memory of the process that launched the run, so a run
  // that waited in the database never asks for approvals.
  if (options.approve !== undefined || run.approvalTokenSha256 !== null) {
    throw new BatonError(
      'approvals_unavailable',
      'A run that waited in the queue cannot ask for tool approvals. Launch it again with approve.',
    );
  }
  const resume = launch.resumeSessionId;
  if (resume !== undefined && (typeof resume !== 'string' || !SESSION_ID.test(resume) || run.parentRunId === null)) {
    throw refused("The run's resume session is not a session id of its parent run");
  }
  const images = launch.images;
  if (images !== undefined) assertOwnImages(images, join(context.runsDir, run.id, 'attachments'));
  return { prompt: launch.prompt, model, posture, resume, images };
}

/**
 * The wall clock and caps: in range, consistent with the stored request, none the vendor does
 * not take, none removed where `[harness]` sets a default.
 *
 * @throws BatonError `option_refused`, `cap_missing`.
 */
function assertRowCaps(
  vendor: VendorName,
  options: Partial<RunRow['options']>,
  launch: Record<string, unknown>,
  harness: BatonConfig['harness'],
): { timeoutMinutes: number; budgetUsd?: number | undefined; maxTurns?: number | undefined } {
  const facts = VENDOR_FACTS[vendor];
  const timeoutMinutes = options.timeoutMinutes;
  if (!isWhole(timeoutMinutes, 1, MAX_TIMEOUT_MINUTES) || launch.timeoutMs !== timeoutMinutes * 60_000)
    throw refused(`The run's wall clock is not whole minutes from 1 to ${MAX_TIMEOUT_MINUTES}`);
  if (!facts.budgetCap && (options.budgetUsd !== undefined || launch.maxBudgetUsd !== undefined))
    throw new BatonError('option_refused', CODEX_BUDGET_REFUSAL);
  if (!facts.turnCap && (options.maxTurns !== undefined || launch.maxTurns !== undefined))
    throw new BatonError('option_refused', CODEX_TURNS_REFUSAL);
  if (launch.maxBudgetUsd !== options.budgetUsd || launch.maxTurns !== options.maxTurns)
    throw refused("The run's caps differ from the ones it was launched with");
  const { budgetUsd, maxTurns, maxTokens } = options;
  if (budgetUsd !== undefined && !(typeof budgetUsd === 'number' && budgetUsd > 0 && budgetUsd <= MAX_BUDGET_USD))
    throw refused(`The run's budget is not US dollars above 0 and at most ${MAX_BUDGET_USD}`);
  if (maxTurns !== undefined && !isWhole(maxTurns, 1, MAX_TURNS))
    throw refused(`The run's turn cap is not a whole number from 1 to ${MAX_TURNS}`);
  if (maxTokens !== undefined && !isWhole(maxTokens, 1, MAX_TOKENS))
    throw refused("The run's token cap is not a whole number of tokens");
  // A `[harness]` default applies to every run that names none: a run without the cap never
  // passed the launch gates as it is now.
  if (facts.budgetCap && harness.defaultBudgetUsd !== undefined && budgetUsd === undefined)
    throw capMissing('budget', 'default_budget_usd', harness.defaultBudgetUsd);
  if (facts.turnCap && harness.defaultMaxTurns !== undefined && maxTurns === undefined)
    throw capMissing('turns', 'default_max_turns', harness.defaultMaxTurns);
  if (harness.defaultMaxTokens !== undefined && maxTokens === undefined)
    throw capMissing('tokens', 'default_max_tokens', harness.defaultMaxTokens);
  return { timeoutMinutes, budgetUsd, maxTurns };
}

/**
 * Every launch gate against a queued or routed run's row, right before it spawns: the gates of
 * {@link assertRowOptions}, and the workspace gate on the directory it runs in (symlinks
 * followed) with the roots as they stand now. A run in its own worktree under `worktreesDir` is
 * checked by the directory it was asked for in its source checkout.
 *
 * @returns the request to spawn with, built from the checked fields only.
 * @throws BatonError every code of {@link assertRowOptions}; `cwd_missing`, `outside_workspace`,
 *   `cwd_holds_config`.
 */
export async function assertSpawnable(run: RunRow, context: SpawnGateContext): Promise<SpawnRequest> {
  const spawn = assertRowOptions(run, context);
  if ((run.launch as { route?: unknown } | null)?.route !== undefined)
    throw refused('The run was never placed on this node');
  const real = await realDirectory(run.cwd);
  const worktrees = context.worktreesDir ? await realpath(context.worktreesDir).catch(() => undefined) : undefined;
  // `<worktrees>/<repo>/<run id>`: baton made it, so it passes in place of its source checkout.
  const inWorktree =
    worktrees !== undefined && isInside(real, worktrees) && relative(worktrees, real).split(sep).length >= 2;
  if (inWorktree) {
    const { sourceRoot, worktreeRoot } = run;
    if (
      !sourceRoot ||
      !isAbsolute(worktreeRoot) ||
      !isInside(worktreeRoot, worktrees) ||
      !isInside(run.cwd, worktreeRoot)
    ) {
      throw new BatonError(
        'outside_workspace',
        `${real} is a run worktree this run was not made with. Launch it again.`,
        { details: { path: real } },
      );
    }
    await assertInsideRoots(
      await realDirectory(join(sourceRoot, relative(worktreeRoot, run.cwd))),
      context.config.workspace.roots,
    );
  } else {
    await assertInsideRoots(real, context.config.workspace.roots);
  }
  await assertHoldsNoConfig(real, context.protectedDirs, inWorktree);
  return spawn;
}

function refused(what: string): BatonError {
  return new BatonError(
    'option_refused',
    `${what}: its stored launch was changed after the gates passed it. Nothing was started; launch it again.`,
  );
}

function capMissing(option: string, key: string, value: number): BatonError {
  return new BatonError(
    'cap_missing',
    `The run has no ${option}: cap, and [harness] ${key} = ${value} gives every run one: its stored launch was changed after the gates passed it. Nothing was started; launch it again.`,
  );
}

function isWhole(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

/** @throws BatonError `option_refused` unless every image is a file of the run's own attachments directory. */
function assertOwnImages(images: unknown, attachmentsDir: string): void {
  const ok =
    Array.isArray(images) &&
    images.every((image: unknown) => {
      const { path, mediaType } = (image ?? {}) as { path?: unknown; mediaType?: unknown };
      return (
        typeof path === 'string' &&
        isAbsolute(path) &&
        normalize(path) === path &&
        isInside(path, attachmentsDir) &&
        path !== attachmentsDir &&
        typeof mediaType === 'string' &&
        /^image\/[a-z0-9.+-]+$/.test(mediaType)
      );
    });
  if (!ok) throw refused("The run's images are not files it was sent");
}

/** @throws BatonError `cwd_missing`. */
async function realDirectory(path: string): Promise<string> {
  if (!isAbsolute(path))
    throw new BatonError('cwd_missing', `${path} is not an absolute directory.`, { details: { path } });
  return realpath(path).catch((err: unknown) => {
    throw new BatonError('cwd_missing', `${path} does not exist any more.`, { cause: err, details: { path } });
  });
}
