/**
 * The prepare step: everything a launch does before the spawn (the run directory, the checks
 * that refuse a launch, the CLI's environment, approval and instruction files, its argv and task).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../core/errors.js';
import { APPROVAL_SERVER_NAME } from '../approval-names.js';
import { writeProjectInstructions } from '../project-instructions.js';
import { buildChildEnv } from '../spawn-env.js';
import type { LaunchRequest, Vendor } from '../vendors/types.js';
import { branchExists, worktreeGoneError, worktreeIntact } from '../worktree-restore.js';
import { markSpan, type RunContext } from './context.js';
import { writePrivate } from './private-file.js';
import type { HarnessWords } from '../ports.js';
import type { InstalledVendor } from './types.js';

/** What the spawn step starts: the CLI's environment, its argv and the task for its stdin. */
export interface PreparedLaunch {
  installed: InstalledVendor;
  env: ReturnType<typeof buildChildEnv>;
  argv: string[];
  task: string;
  /** The request as the CLI gets it (with the run's approval and instruction files). */
  launch: LaunchRequest;
}

/** Control flow: a cancel or shutdown arrived before the CLI was spawned, so it never is. */
export class StoppedBeforeSpawn extends Error {}

/**
 * Prepares the launch of `ctx.run`.
 *
 * @throws BatonError `vendor_missing`, `task_too_long`, `worktree_gone`, `approvals_unavailable`
 *   (the launch is refused); {@link StoppedBeforeSpawn} when the run was stopped meanwhile (its
 *   stop reason is then in `ctx.exit`); whatever the file system throws.
 */
export async function prepareLaunch(ctx: RunContext): Promise<PreparedLaunch> {
  const { deps } = ctx.services;
  const { run, runDir, runId, request, installed } = ctx;
  if (!installed) throw new BatonError('vendor_missing', deps.words.vendorMissing(run.vendor));
  // Synchronous on purpose: two metadata calls in baton's own home take microseconds, and the
  // thread-pool round trips of the async ones cost the launch 1.8 ms p50, 5.2 ms p95 on the
  // 2-core machine (dispatch bench spans).
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  chmodSync(runDir, 0o700);
  markSpan(ctx, 'run_dir');
  checkTaskLength(installed.vendor, request.prompt, deps.words);
  // The last word on where a run happens, whichever path (a queue, another node) led here:
  // a worktree that is gone must not become an empty or foreign directory to run in.
  if (run.branch && run.sourceRoot && !(await worktreeIntact(run.worktreeRoot))) {
    throw worktreeGoneError(
      runId,
      { worktreeRoot: run.worktreeRoot, branch: run.branch, sourceRoot: run.sourceRoot },
      await branchExists(run.sourceRoot, run.branch),
      deps.words.runTag,
    );
  }
  const env = buildChildEnv(installed.vendor, deps.baseEnv, deps.homes, runId);
  const launch: LaunchRequest = { ...request };
  if (request.approvalToken !== undefined) {
    // A session CLI asks over its own stdio; the others through baton's permission-prompt server.
    if (!installed.vendor.openSession) launch.approvalMcpConfig = await writeApprovalConfig(ctx, installed);
    else if (!installed.vendor.supportsApprovals || !deps.sessionApprovals)
      throw new BatonError('approvals_unavailable', deps.words.approvalsUnavailable(run.vendor));
  }
  if (installed.vendor.instructionFiles) {
    const instructions = await writeProjectInstructions(
      run.cwd,
      installed.vendor.instructionFiles,
      join(runDir, 'instructions.md'),
    );
    if (instructions.file) launch.instructionsFile = instructions.file;
    if (instructions.skipped.length > 0) ctx.exit.instructionsNote = instructions.skipped.join('\n');
    markSpan(ctx, 'instructions');
  }
  const argv = installed.vendor.buildArgv(launch, { cwd: run.cwd });
  const task = await installed.vendor.stdinPayload(launch);
  markSpan(ctx, 'task_payload');
  if (ctx.entry.stopBeforeSpawn) {
    Object.assign(ctx.exit, ctx.entry.stopBeforeSpawn);
    throw new StoppedBeforeSpawn();
  }
  return { installed, env, argv, task, launch };
}

/**
 * Writes the run's `mcp.json`: only baton's permission-prompt server, from this file (0600, in
 * the 0700 run directory); --strict-mcp-config keeps every other MCP config out, and the token
 * lets the server ask about this run only.
 *
 * @returns the file's path.
 * @throws BatonError `approvals_unavailable` when this vendor or service gives no approvals.
 */
async function writeApprovalConfig(ctx: RunContext, installed: InstalledVendor): Promise<string> {
  const { deps } = ctx.services;
  const { approvalServer } = deps;
  const token = ctx.request.approvalToken;
  if (!installed.vendor.supportsApprovals || !approvalServer || token === undefined) {
    throw new BatonError('approvals_unavailable', deps.words.approvalsUnavailable(ctx.run.vendor));
  }
  const mcpConfig = join(ctx.runDir, 'mcp.json');
  await writePrivate(
    mcpConfig,
    JSON.stringify({
      mcpServers: { [APPROVAL_SERVER_NAME]: { type: 'stdio', ...approvalServer(ctx.runId, token) } },
    }),
  );
  return mcpConfig;
}

/**
 * Checks the task fits what the vendor reads on stdin (every task goes there).
 *
 * @throws BatonError `task_too_long` when the vendor cannot take that many characters at all.
 */
function checkTaskLength(vendor: Vendor, prompt: string, words: HarnessWords): void {
  const max = vendor.maxStdinPromptChars;
  if (max === undefined || prompt.length <= max) return;
  const chars = codePoints(prompt);
  if (chars > max) {
    throw new BatonError('task_too_long', words.taskTooLong({ chars, vendor: vendor.name, maxChars: max }));
  }
}

/** Characters as the CLIs count them: Unicode code points (an emoji is one, not two UTF-16 units). */
function codePoints(text: string): number {
  return text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);
}
