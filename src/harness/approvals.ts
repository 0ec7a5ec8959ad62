/**
 * Tool approvals for claude runs: the service's side of the per-run permission-prompt
 * server (`approval-server.ts`). A request becomes an `approvals` row and one chat message with
 * the tool, its exact input and the buttons Allow / Allow for this run / Deny; the server asks
 * again until the owner decides, the run is gone, or `approval_timeout_minutes` passes (denied).
 * Decisions live in the database, so they survive a restart of the service.
 */
import { timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunId } from '../core/ids.js';
import type { ApprovalRow, RunRow } from '../store/schema.js';
import { answerOf } from './approval-answer.js';
import { postApprovalMessage } from './approval-message.js';
import { alwaysAsks, approvalScope, describeKind } from './approval-scope.js';
import { sha256Hex } from './approval-token.js';
import type { ApprovalAnswer, ApprovalBrokerDeps, ApprovalRequest } from './approval-types.js';
import { outcomeTarget } from './run/outcome-target.js';

export { describeKind } from './approval-scope.js';
export { APPROVAL_ACTIONS, approvalButtons } from './approval-buttons.js';
export { newApprovalToken } from './approval-token.js';
export { describeToolCall, MAX_APPROVAL_INPUT_CHARS, revealToolCall, toolCallText } from './approval-text.js';
export type { ApprovalAnswer, ApprovalBrokerDeps, ApprovalRequest } from './approval-types.js';

/** The service side of tool approvals. */
export class ApprovalBroker {
  private readonly decided = new EventEmitter();

  constructor(private readonly deps: ApprovalBrokerDeps) {
    this.decided.setMaxListeners(0);
  }

  /**
   * Whether `token` is the approval token of run `runId` (constant-time compare of SHA-256s).
   *
   * @returns the run, or undefined when the run is unknown, asks no approvals, or the token is wrong.
   */
  async authorize(runId: string, token: string): Promise<RunRow | undefined> {
    const run = await this.deps.store.runs.getRun(runId);
    if (!run?.approvalTokenSha256) return undefined;
    const expected = Buffer.from(run.approvalTokenSha256, 'hex');
    const given = Buffer.from(sha256Hex(token), 'hex');
    return expected.length === given.length && timingSafeEqual(expected, given) ? run : undefined;
  }

  /**
   * One ask of the permission-prompt server: records the request (once; a repeated ask finds
   * it), posts its message, and waits up to the long-poll time for a decision. Applies an
   * earlier "Allow for this run" of the same kind, the timeout, and a run that is gone.
   *
   * @returns `pending` when nothing was decided yet (the server asks again).
   */
  async request(run: RunRow, request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalAnswer> {
    const { deps } = this;
    const scope = await approvalScope(request.tool, request.input, {
      cwd: run.cwd,
      homeDir: deps.homeDir,
      protectedDirs: deps.protectedDirs,
    });
    const { kind } = scope;
    const { row, created } = await deps.approvals.open({ ...request, kind }, deps.clock.now());
    if (created) {
      const rule = alwaysAsks(kind) ? undefined : await deps.approvals.ruleFor(run.id, kind);
      if (rule) {
        const allowed = await deps.approvals.decide(row.id, 'allow', `rule:${rule.id}`, deps.clock.now());
        if (allowed) {
          deps.logger.info(
            { runId: run.id, approvalId: row.id, tool: request.tool, rule: rule.id },
            'tool call allowed by an earlier "Allow for this run"',
          );
          return answerOf(allowed, deps.timeoutMs, deps.words);
        }
      } else {
        await postApprovalMessage(deps, run, row.id, request, scope);
        deps.logger.info({ runId: run.id, approvalId: row.id, tool: request.tool }, 'tool approval asked in chat');
      }
    }
    const until = deps.clock.nowMs() + (deps.longPollMs ?? 20_000);
    for (;;) {
      const current = await deps.approvals.get(row.id);
      if (!current)
        return { state: 'decided', decision: 'run_gone', behavior: 'deny', message: deps.words.deniedRunGone };
      if (current.decision) return answerOf(current, deps.timeoutMs, deps.words);
      const latest = await deps.store.runs.getRun(run.id);
      if (!latest || (latest.status !== 'starting' && latest.status !== 'running')) {
        const gone = await deps.approvals.decide(row.id, 'run_gone', 'baton', deps.clock.now());
        if (gone) return answerOf(gone, deps.timeoutMs, deps.words);
        continue;
      }
      if (deps.clock.nowMs() >= current.requestedAt.getTime() + deps.timeoutMs) {
        const timedOut = await deps.approvals.decide(row.id, 'timeout', 'baton', deps.clock.now());
        if (timedOut) {
          await deps.outbox.send({
            runId: run.id as RunId,
            kind: 'notice',
            target: outcomeTarget(run),
            body: deps.words.timeoutNotice({ runId: run.id, tool: request.tool, waitMs: deps.timeoutMs }),
          });
          return answerOf(timedOut, deps.timeoutMs, deps.words);
        }
        continue;
      }
      const remaining = until - deps.clock.nowMs();
      if (remaining <= 0 || signal?.aborted) return { state: 'pending' };
      await this.waitForDecision(row.id, Math.min(remaining, deps.pollMs ?? 500), signal);
    }
  }

  /** Every approval of a run, oldest first (for `/runs ID`). */
  ofRun(runId: string): Promise<ApprovalRow[]> {
    return this.deps.approvals.ofRun(runId);
  }

  /** One approval by id, or undefined. */
  approval(id: number): Promise<ApprovalRow | undefined> {
    return this.deps.approvals.get(id);
  }

  /**
   * The owner's press on an approval message.
   *
   * @returns the short answer the presser sees.
   */
  async press(approvalId: number, decision: 'allow' | 'allow_run' | 'deny', decidedBy: string): Promise<string> {
    const { deps } = this;
    const words = deps.words.pressed;
    const open = await deps.approvals.get(approvalId);
    const run = open && !open.decision ? await deps.store.runs.getRun(open.runId) : undefined;
    if (open && !open.decision && (!run || (run.status !== 'starting' && run.status !== 'running'))) {
      await deps.approvals.closeGone(deps.clock.now(), open.runId);
      return words.runEnded;
    }
    // A call that always asks gives no rule: "Allow for this run" (an old card's) allows it once.
    const given = decision === 'allow_run' && open && alwaysAsks(open.kind) ? 'allow' : decision;
    const row = await deps.approvals.decide(approvalId, given, decidedBy, deps.clock.now());
    if (!row) {
      const existing = await deps.approvals.get(approvalId);
      return existing?.decision ? words.alreadyDecided(existing.decision) : words.noSuchApproval;
    }
    deps.logger.info({ runId: row.runId, approvalId, decision: given, by: decidedBy }, 'tool approval decided');
    this.decided.emit(String(approvalId));
    return given === 'deny'
      ? words.denied
      : given === 'allow_run'
        ? words.allowedForRun(describeKind(row.kind))
        : words.allowed;
  }

  private async waitForDecision(approvalId: number, ms: number, signal?: AbortSignal): Promise<void> {
    const key = String(approvalId);
    const wake = new AbortController();
    const listener = (): void => wake.abort();
    this.decided.once(key, listener);
    const signals = signal ? AbortSignal.any([signal, wake.signal]) : wake.signal;
    await sleep(ms, undefined, { signal: signals }).catch(() => undefined);
    this.decided.off(key, listener);
  }
}
