/**
 * Tool approvals for claude runs: the service's side of the per-run permission-prompt
 * server (`approval-server.ts`). A request becomes an `approvals` row and one chat message with
 * the tool, its exact input and the buttons Allow / Allow for this run / Deny; the server asks
 * again until the owner decides, the run is gone, or `approval_timeout_minutes` passes (denied).
 * Decisions live in the database, so they survive a restart of the service.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../core/clock.js';
import { formatDurationMs } from '../core/clock.js';
import type { RunId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { Outbox } from '../delivery/outbox.js';
import type { ApprovalDecision, ApprovalStore } from '../store/approvals-repo.js';
import type { RunStore } from '../store/runs-repo.js';
import type { ButtonJson } from '../core/buttons.js';
import type { ApprovalRow, DocumentJson, RunRow } from '../store/schema.js';
import { alwaysAsks, approvalScope, describeKind, type ApprovalScope } from './approval-scope.js';
import { hiddenWarning, revealHidden, type HiddenKind, type RevealedText } from './reveal-text.js';
import { outcomeTarget } from './run/outcome-target.js';
import type { RunTagger } from './ports.js';

export { describeKind } from './approval-scope.js';

/** Button actions of an approval message; the argument is the approval id. */
export const APPROVAL_ACTIONS = { allow: 'allow', allow_run: 'allow_run', deny: 'deny' } as const satisfies Record<
  string,
  ApprovalDecision
>;

/**
 * Longest tool input shown in an approval message, in characters, where the platform allows more;
 * the rest is cut with a note and the whole input follows as a file.
 */
export const MAX_APPROVAL_INPUT_CHARS = 3000;

/** One permission request, as the permission-prompt server forwards it from claude. */
export interface ApprovalRequest {
  runId: string;
  /** claude's `tool_use_id`. */
  requestId: string;
  /** claude's `tool_name`, e.g. `Bash`, `Write`, `Edit`, `mcp__srv__tool`. */
  tool: string;
  /** claude's `input`: the tool call's arguments as the model wrote them. */
  input: Record<string, unknown>;
}

/**
 * The answer to one ask: `pending` (ask again), or the decision in the words claude's
 * permission-prompt tool must return (`behavior` `allow` | `deny`, see the claude vendor module).
 */
export type ApprovalAnswer =
  | { state: 'pending' }
  | { state: 'decided'; decision: ApprovalDecision; behavior: 'allow' | 'deny'; message: string };

/** Dependencies of the {@link ApprovalBroker}. */
export interface ApprovalBrokerDeps {
  approvals: ApprovalStore;
  store: RunStore;
  outbox: Outbox;
  clock: Clock;
  logger: Logger;
  /** `approval_timeout_minutes`, in ms. */
  timeoutMs: number;
  /** Longest single wait of one ask before it answers `pending`, in ms. @default 20_000 */
  longPollMs?: number;
  /** How often a waiting ask looks at the database, in ms. @default 500 */
  pollMs?: number;
  /**
   * Where run directories live (`<runsDir>/<run id>`): the whole input of a call too long for one
   * message is written there as `approval-<id>.txt` (0600) and sent as a file. @default none (cut only)
   */
  runsDir?: string;
  /**
   * Longest text of one message on a platform, in UTF-16 code units (the adapter's
   * `maxMessageLength`), or undefined when the platform is not connected. @default none ({@link MAX_APPROVAL_INPUT_CHARS} only)
   */
  maxMessageLength?: (platform: string) => number | undefined;
  /** The home directory of the user baton runs as: `~` in commands, and its dotfiles always ask. */
  homeDir: string;
  /** `$BATON_HOME` and the CLI homes: writes there always ask, marked "baton's own files". */
  protectedDirs: readonly string[];
  /** The wording's `[run …]` tag, which starts every approval message. */
  runTag: RunTagger;
}

/** A fresh per-run token and its SHA-256 (hex), which the run row keeps. */
export function newApprovalToken(): { token: string; sha256: string } {
  const token = randomBytes(24).toString('hex');
  return { token, sha256: sha256Hex(token) };
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The tool call as the owner reads it, whole, with hidden characters made visible (see
 * reveal-text.ts): the command line for Bash; the file path and a diff for edits (`-` old, `+`
 * new lines); the path and the new lines for a write; the JSON input otherwise. Command lines and
 * paths escape every non-ASCII character; file contents only hidden ones and look-alike letters.
 */
export function revealToolCall(tool: string, input: Record<string, unknown>): RevealedText {
  const found = new Set<HiddenKind>();
  const show = (text: string, strict: boolean): string => {
    const revealed = revealHidden(text, strict);
    for (const kind of revealed.found) found.add(kind);
    return revealed.text;
  };
  const str = (key: string): string | undefined => (typeof input[key] === 'string' ? input[key] : undefined);
  const lines = (text: string, mark: string): string =>
    show(text, false)
      .split('\n')
      .map((l) => `${mark} ${l}`)
      .join('\n');
  const diff = (oldText: string, newText: string): string => `${lines(oldText, '-')}\n${lines(newText, '+')}`;
  const path = (key: string): string => show(str(key) ?? '?', true);
  let text: string;
  switch (tool) {
    case 'Bash':
      text = `$ ${show(str('command') ?? '', true)}`;
      break;
    case 'Write':
      text = `${path('file_path')}\n${lines(str('content') ?? '', '+')}`;
      break;
    case 'Edit':
      text = `${path('file_path')}\n${diff(str('old_string') ?? '', str('new_string') ?? '')}`;
      break;
    case 'MultiEdit': {
      const edits = Array.isArray(input['edits']) ? input['edits'] : [];
      text = [
        path('file_path'),
        ...edits.map((e) =>
          typeof e === 'object' && e !== null
            ? diff(
                String((e as Record<string, unknown>)['old_string'] ?? ''),
                String((e as Record<string, unknown>)['new_string'] ?? ''),
              )
            : '',
        ),
      ].join('\n');
      break;
    }
    default:
      text = show(JSON.stringify(input, null, 2), false);
  }
  return { text, found };
}

/** {@link revealToolCall}'s text. */
export function toolCallText(tool: string, input: Record<string, unknown>): string {
  return revealToolCall(tool, input).text;
}

/**
 * {@link toolCallText} cut to `maxChars` characters, the note included: `… (N more characters;
 * <where>)`, `where` saying where the whole input is.
 */
export function describeToolCall(
  tool: string,
  input: Record<string, unknown>,
  maxChars = MAX_APPROVAL_INPUT_CHARS,
  where = '/runs shows the request',
): string {
  return cutToolCallText(toolCallText(tool, input), maxChars, where);
}

function cutToolCallText(text: string, maxChars: number, where: string): string {
  if (text.length <= maxChars) return text;
  const note = (cut: number): string => `\n… (${cut} more characters; ${where})`;
  // The note is counted in the limit, so the message stays within the platform's.
  let keep = Math.max(0, maxChars - note(text.length).length);
  // Never split a surrogate pair.
  if (keep > 0 && /[\ud800-\udbff]/.test(text[keep - 1]!)) keep -= 1;
  return `${text.slice(0, keep)}${note(text.length - keep)}`;
}

/** The buttons under an approval message. */
export function approvalButtons(approvalId: number, kind = ''): ButtonJson[] {
  const arg = String(approvalId);
  return [
    { label: 'Allow', action: APPROVAL_ACTIONS.allow, arg },
    // A call that always asks offers no rule for later calls.
    ...(alwaysAsks(kind) ? [] : [{ label: 'Allow for this run', action: APPROVAL_ACTIONS.allow_run, arg }]),
    { label: 'Deny', action: APPROVAL_ACTIONS.deny, arg },
  ];
}

/** The approval wait in words: whole minutes as "10 minutes", anything else as a duration ("1s"). */
function waitWords(ms: number): string {
  const minutes = ms / 60_000;
  return Number.isInteger(minutes) ? `${minutes} minute${minutes === 1 ? '' : 's'}` : formatDurationMs(ms);
}

/** What claude is told for each decision. */
function answerOf(row: ApprovalRow, timeoutMs: number): ApprovalAnswer {
  const decision = row.decision!;
  switch (decision) {
    case 'allow':
    case 'allow_run':
      return { state: 'decided', decision, behavior: 'allow', message: '' };
    case 'deny':
      return {
        state: 'decided',
        decision,
        behavior: 'deny',
        message: 'The owner denied this tool call from the chat.',
      };
    case 'timeout':
      return {
        state: 'decided',
        decision,
        behavior: 'deny',
        message: `The owner did not answer within ${waitWords(timeoutMs)}, so this tool call is denied.`,
      };
    case 'run_gone':
      return { state: 'decided', decision, behavior: 'deny', message: 'The run ended before the owner answered.' };
  }
}

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
          return answerOf(allowed, deps.timeoutMs);
        }
      } else {
        await this.ask(run, row.id, request, scope);
        deps.logger.info({ runId: run.id, approvalId: row.id, tool: request.tool }, 'tool approval asked in chat');
      }
    }
    const until = deps.clock.nowMs() + (deps.longPollMs ?? 20_000);
    for (;;) {
      const current = await deps.approvals.get(row.id);
      if (!current)
        return {
          state: 'decided',
          decision: 'run_gone',
          behavior: 'deny',
          message: 'The run ended before the owner answered.',
        };
      if (current.decision) return answerOf(current, deps.timeoutMs);
      const latest = await deps.store.runs.getRun(run.id);
      if (!latest || (latest.status !== 'starting' && latest.status !== 'running')) {
        const gone = await deps.approvals.decide(row.id, 'run_gone', 'baton', deps.clock.now());
        if (gone) return answerOf(gone, deps.timeoutMs);
        continue;
      }
      if (deps.clock.nowMs() >= current.requestedAt.getTime() + deps.timeoutMs) {
        const timedOut = await deps.approvals.decide(row.id, 'timeout', 'baton', deps.clock.now());
        if (timedOut) {
          await deps.outbox.send({
            runId: run.id as RunId,
            kind: 'notice',
            target: outcomeTarget(run),
            body: `${deps.runTag(run.id)} No answer within ${waitWords(deps.timeoutMs)}: ${request.tool} denied.`,
          });
          return answerOf(timedOut, deps.timeoutMs);
        }
        continue;
      }
      const remaining = until - deps.clock.nowMs();
      if (remaining <= 0 || signal?.aborted) return { state: 'pending' };
      await this.waitForDecision(row.id, Math.min(remaining, deps.pollMs ?? 500), signal);
    }
  }

  /**
   * Posts the approval message: the tool and its input, the buttons. An input that would make the
   * message longer than the platform's limit is cut to fit one message, and the whole input is
   * written to the run directory and sent as a file after the message (the buttons stay under
   * the message). A file that cannot be written is logged; the cut message still goes.
   */
  private async ask(run: RunRow, approvalId: number, request: ApprovalRequest, scope: ApprovalScope): Promise<void> {
    const { deps } = this;
    const { kind } = scope;
    const revealed = revealToolCall(request.tool, request.input);
    const header = `${deps.runTag(run.id)} claude asks to use ${revealHidden(request.tool, true).text}:\n`;
    // The warnings go before the footer, so a cut input never cuts them.
    const warnings = [
      ...(scope.mark
        ? [`⚠ ${scope.mark}: ${revealHidden(scope.path ?? '', true).text || 'no path given'}. Such a call always asks.`]
        : []),
      ...(hiddenWarning(revealed.found) ? [hiddenWarning(revealed.found)!] : []),
    ];
    const covers = alwaysAsks(kind) ? '' : ` Allow for this run covers ${describeKind(kind)}.`;
    const footer = `\n\n${warnings.map((w) => `${w}\n`).join('')}No answer within ${waitWords(deps.timeoutMs)} denies it.${covers}`;
    const platformMax = deps.maxMessageLength?.(run.origin.platform);
    const maxChars = Math.min(
      MAX_APPROVAL_INPUT_CHARS,
      platformMax === undefined ? Infinity : Math.max(200, platformMax - header.length - footer.length),
    );
    const whole = revealed.text;
    const filename = `approval-${approvalId}.txt`;
    const documents: DocumentJson[] = [];
    if (whole.length > maxChars && deps.runsDir) {
      const path = join(deps.runsDir, run.id, filename);
      await writeFile(path, whole, { mode: 0o600 })
        .then(() => chmod(path, 0o600))
        .then(
          () =>
            documents.push({
              path,
              filename,
              use: 'always',
              caption: `${deps.runTag(run.id)} The whole input of this tool call: ${filename}`,
            }),
          (err: unknown) =>
            deps.logger.warn(
              { err, runId: run.id, approvalId },
              'could not write the whole tool input; the approval message is cut',
            ),
        );
    }
    await deps.outbox.send({
      runId: run.id as RunId,
      kind: 'approval',
      target: outcomeTarget(run),
      body: `${header}${cutToolCallText(whole, maxChars, documents.length > 0 ? `the whole input follows as ${filename}` : '/runs shows the request')}${footer}`,
      buttons: approvalButtons(approvalId, kind),
      ...(documents.length > 0 ? { documents } : {}),
    });
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
    const open = await deps.approvals.get(approvalId);
    const run = open && !open.decision ? await deps.store.runs.getRun(open.runId) : undefined;
    if (open && !open.decision && (!run || (run.status !== 'starting' && run.status !== 'running'))) {
      await deps.approvals.closeGone(deps.clock.now(), open.runId);
      return 'That run has already ended.';
    }
    // A call that always asks gives no rule: "Allow for this run" (an old card's) allows it once.
    const given = decision === 'allow_run' && open && alwaysAsks(open.kind) ? 'allow' : decision;
    const row = await deps.approvals.decide(approvalId, given, decidedBy, deps.clock.now());
    if (!row) {
      const existing = await deps.approvals.get(approvalId);
      return existing?.decision ? `Already decided: ${existing.decision}.` : 'No such approval.';
    }
    deps.logger.info({ runId: row.runId, approvalId, decision: given, by: decidedBy }, 'tool approval decided');
    this.decided.emit(String(approvalId));
    return given === 'deny'
      ? 'Denied.'
      : given === 'allow_run'
        ? `Allowed, and ${describeKind(row.kind)} for the rest of this run.`
        : 'Allowed.';
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
