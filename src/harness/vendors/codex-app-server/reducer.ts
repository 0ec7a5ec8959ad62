/**
 * Folds what `codex app-server` prints (codex-cli 0.171.0) into the run's facts: the same facts
 * the `codex exec --json` reducer gathers, from the app-server's notifications and answers.
 */
import type { UsageJson } from '../../../store/schema.js';
import { unwrapShell } from '../codex.js';
import { LiveTracker } from '../live.js';
import { codexLimitOf } from '../quota.js';
import type { StreamFacts, StreamReducer } from '../types.js';
import { isInvalidUsage, ownUsage, readTokenFigures, type InvalidUsage } from '../usage-figures.js';
import { isLaunchAnswer } from './rpc.js';
import type { ErrorNotification } from './protocol/v2/ErrorNotification.js';
import type { ThreadItem } from './protocol/v2/ThreadItem.js';
import type { ThreadTokenUsageUpdatedNotification } from './protocol/v2/ThreadTokenUsageUpdatedNotification.js';
import type { TurnCompletedNotification } from './protocol/v2/TurnCompletedNotification.js';
import type { TurnError } from './protocol/v2/TurnError.js';

const MAX_NOTICES = 20;

/** One line of the server's stdout, as far as the reducer reads it. */
interface Message {
  id?: unknown;
  method?: unknown;
  params?: unknown;
  result?: unknown;
  error?: { message?: unknown };
}

/**
 * The app-server reducer. A turn's end is `turn/completed` (`status` completed, failed or
 * interrupted); usage is `thread/tokenUsage/updated`'s `total`, the thread's totals like
 * `exec`'s `turn.completed` usage, so a resumed thread's earlier part is subtracted; the session
 * id is the thread id of the thread/start or thread/resume answer.
 */
export class CodexAppServerReducer implements StreamReducer {
  private readonly state: StreamFacts = { notices: [], eventCount: 0 };
  private readonly live = new LiveTracker();
  private readonly denied = new Set<string>();
  /** @param sessionUsageBefore a resumed thread's usage when the run began. */
  constructor(private readonly sessionUsageBefore?: UsageJson) {}

  push(event: unknown): void {
    this.state.eventCount += 1;
    if (typeof event !== 'object' || event === null) return;
    const m = event as Message;
    if (m.method === undefined && m.id !== undefined) {
      this.answer(m);
      return;
    }
    switch (m.method) {
      case 'thread/started': {
        const id = (m.params as { thread?: { id?: unknown } } | undefined)?.thread?.id;
        if (typeof id === 'string') this.state.sessionId ??= id;
        break;
      }
      case 'item/started':
        this.itemStarted((m.params as { item?: ThreadItem } | undefined)?.item);
        break;
      case 'item/completed':
        this.itemCompleted((m.params as { item?: ThreadItem } | undefined)?.item);
        break;
      case 'thread/tokenUsage/updated':
        this.usage(m.params as ThreadTokenUsageUpdatedNotification | undefined);
        break;
      case 'turn/completed':
        this.turnCompleted(m.params as TurnCompletedNotification | undefined);
        break;
      case 'error': {
        // Retries (`willRetry`) and the error a failed turn then ends with: notices, never fatal
        // by themselves; the last one is codex's own words for a run that ends without its turn.
        const message = turnErrorText((m.params as ErrorNotification | undefined)?.error);
        if (message !== undefined) {
          this.notice(message);
          this.state.lastError = message;
        }
        break;
      }
      case 'warning':
      case 'configWarning': {
        const p = m.params as { message?: unknown; summary?: unknown } | undefined;
        const text = typeof p?.message === 'string' ? p.message : p?.summary;
        if (typeof text === 'string') this.notice(text);
        break;
      }
      default:
        // Deltas, status changes, rate limits and methods this build doesn't know are tolerated.
        break;
    }
  }

  facts(): StreamFacts {
    return {
      ...this.state,
      notices: [...this.state.notices],
      ...(this.state.denials ? { denials: this.state.denials.map((d) => ({ ...d })) } : {}),
      live: this.live.facts(),
    };
  }

  /** An answer to one of baton's requests: a thread id, or the refusal that ends the run. */
  private answer(m: Message): void {
    const id = (m.result as { thread?: { id?: unknown } } | undefined)?.thread?.id;
    if (typeof id === 'string') this.state.sessionId ??= id;
    // A refused steer or interrupt leaves the turn as it was; a refused launch request ends the run.
    if (m.error !== undefined && isLaunchAnswer(m.id)) {
      const message = typeof m.error.message === 'string' ? m.error.message : JSON.stringify(m.error);
      this.state.terminal = { kind: 'failed', message: `codex app-server refused the request: ${message}` };
    }
  }

  private turnCompleted(params: TurnCompletedNotification | undefined): void {
    const turn = params?.turn;
    if (!turn) return;
    if (turn.status === 'completed') {
      this.state.terminal = { kind: 'completed' };
      return;
    }
    const message = turn.error?.message ?? `codex reported the turn ${turn.status}`;
    // The plan's usage limit: codex's words carry the reset time (as with `codex exec`), and
    // its error info names the limit even where the words give no time.
    const quota =
      codexLimitOf(message, new Date()) ??
      (turn.error?.codexErrorInfo === 'usageLimitExceeded' ? { exhausted: true } : undefined);
    this.state.terminal = quota ? { kind: 'failed', message, reason: 'quota_exhausted' } : { kind: 'failed', message };
    if (quota) this.state.quota = quota;
  }

  private usage(params: ThreadTokenUsageUpdatedNotification | undefined): void {
    const reported = readUsage(params?.tokenUsage?.total);
    const usage = isInvalidUsage(reported) ? reported : ownUsage(reported, this.sessionUsageBefore);
    if (isInvalidUsage(usage)) {
      delete this.state.usage;
      this.state.usageInvalid = usage.invalid;
      return;
    }
    this.state.usage = usage;
    delete this.state.usageInvalid;
    this.live.tokensSoFar(usage.inputTokens + usage.outputTokens);
  }

  /** The live status's current step: a command, an MCP tool call or a web search. */
  private itemStarted(item: ThreadItem | undefined): void {
    if (!item) return;
    if (item.type === 'commandExecution') this.live.stepStarted(`running ${unwrapShell(item.command)}`);
    else if (item.type === 'mcpToolCall') this.live.stepStarted(`tool ${item.server}/${item.tool}`);
    else if (item.type === 'webSearch')
      this.live.stepStarted(item.query !== '' ? `searching the web for ${item.query}` : 'searching the web');
  }

  /** The answer, changed files, and calls the owner declined (codex marks the item `declined`). */
  private itemCompleted(item: ThreadItem | undefined): void {
    if (!item) return;
    if (item.type === 'agentMessage') this.state.finalMessage = item.text;
    else if (item.type === 'fileChange') {
      if (item.status === 'declined') this.deny(item.id, 'ApplyPatch', item.changes.map((c) => c.path).join(', '));
      else for (const change of item.changes) this.live.fileChanged(change.path);
    } else if (item.type === 'commandExecution' && item.status === 'declined')
      this.deny(item.id, 'Bash', unwrapShell(item.command));
  }

  private deny(itemId: string, tool: string, detail: string): void {
    if (this.denied.has(itemId)) return;
    this.denied.add(itemId);
    (this.state.denials ??= []).push(detail === '' ? { tool } : { tool, detail });
  }

  private notice(message: string): void {
    this.state.notices.push(message);
    if (this.state.notices.length > MAX_NOTICES) this.state.notices.shift();
  }
}

/**
 * A codex error in `exec`'s words: its `message` with its `additionalDetails` in parentheses
 * ("Reconnecting... 1/5 (unexpected status 401 …)", as `codex exec` prints it), or undefined.
 */
export function turnErrorText(error: Partial<TurnError> | null | undefined): string | undefined {
  if (typeof error?.message !== 'string') return undefined;
  const details = error.additionalDetails;
  return typeof details === 'string' && details !== '' && details !== error.message
    ? `${error.message} (${details})`
    : error.message;
}

/** `tokenUsage.total`, the thread's totals so far (codex-cli 0.171.0), checked ({@link readTokenFigures}). */
function readUsage(raw: unknown): Omit<UsageJson, 'session'> | InvalidUsage {
  const u = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const figures = readTokenFigures(u, [
    'inputTokens',
    'cachedInputTokens',
    'outputTokens',
    'reasoningOutputTokens',
  ] as const);
  if (isInvalidUsage(figures)) return figures;
  return {
    inputTokens: figures.inputTokens,
    cachedInputTokens: figures.cachedInputTokens,
    outputTokens: figures.outputTokens,
    reasoningOutputTokens: figures.reasoningOutputTokens,
  };
}
