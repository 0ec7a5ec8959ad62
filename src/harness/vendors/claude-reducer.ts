import type { DenialJson, UsageJson } from '../../store/schema.js';
import { isInvalidUsage, readCostFigure } from './usage-figures.js';
import { LiveTracker } from './live.js';
import type { StreamFacts, StreamReducer } from './types.js';
import type { SniffedEvent } from '../json-lines.js';
import {
  describeDenial,
  describeRetry,
  describeSubtype,
  describeToolUse,
  isRecord,
  joinErrors,
} from './claude-events.js';
import { addUsage, costSinceLastResult, readUsage } from './claude-usage.js';
import { claudeRateLimitInfoOf } from './quota.js';

const MAX_NOTICES = 20;

/**
 * Folds `claude -p --output-format stream-json --verbose` messages: `system/init`,
 * `system/api_retry`, `system/permission_denied`, `assistant`, `user` and the terminal `result`.
 *
 * - A run can print several `result` lines: one per turn it ends, and background shells (2.1.197)
 *   and background sub-agents (2.1.332) start more turns (fixtures `claude-2.1.332/`,
 *   `claude-2.1.197-more/`). The last `result` is terminal, and `is_error`
 *   decides, not `subtype`: API errors arrive as `subtype:"success"` with `is_error:true`
 * A result completes the run only when `is_error` is `false` and the subtype
 *   is `success` (or absent). `error_max_turns` and `error_max_budget_usd` name their own reason.
 * - The final message is the last text of a top-level assistant message; `result.result` when
 *   there was none. Synthetic assistant messages (`model:"<synthetic>"`, the CLI's own error
 *   text) and sub-agent messages (`parent_tool_use_id` set) are not the run's answer.
 * - Usage is summed over every `result.usage` of the run. Anthropic's `input_tokens` counts only
 *   uncached input, so `inputTokens` = `input_tokens` + `cache_creation_input_tokens` +
 *   `cache_read_input_tokens`, every prompt token, which is what codex's `input_tokens` means;
 *   `cachedInputTokens` = `cache_read_input_tokens` (a part of `inputTokens`, as for codex).
 *   No reasoning-token count is reported.
 * - Cost is this run's: 2.1.332's `total_cost_usd` covers the whole (resumed) session, so where a
 *   result carries `model_usage_since_last_result` its `costUSD` values are summed; 2.1.197 has
 *   no such field and its `total_cost_usd` covers this process, so its last value is kept.
 * - Denied tool calls come from `result.permission_denials` and, on 2.1.332, from
 *   `system/permission_denied` as each happens; each `tool_use_id` counts once.
 * - Plan windows come from `rate_limit_event` (printed under a subscription login only); a `result`
 *   with `api_error: "usage_limit_reached"` ends the run `quota_exhausted`, reset at the
 *   `resetsAt` of the latest rate-limit info (docs/vendors/quota.md).
 */
export class ClaudeReducer implements StreamReducer {
  private readonly state: StreamFacts = { notices: [], eventCount: 0 };
  /** Inputs of the run's tool calls by `tool_use_id`, to describe a `system/permission_denied`. */
  private readonly toolInputs = new Map<string, Record<string, unknown>>();
  private readonly denials = new Map<string, DenialJson>();
  private costIncrementsUsd: number | undefined;
  private processCostUsd: number | undefined;
  private readonly live = new LiveTracker();
  /** Tokens of each assistant message by message id (claude repeats a message's usage on each of its content blocks). */
  private readonly messageTokens = new Map<string, number>();
  private messageTokensSum = 0;

  push(event: unknown): void {
    this.state.eventCount += 1;
    if (!isRecord(event)) return;
    switch (event['type']) {
      case 'system':
        this.system(event);
        break;
      case 'assistant':
        this.assistant(event);
        break;
      case 'result':
        this.result(event);
        break;
      case 'rate_limit_event':
        this.rateLimit(event['rate_limit_info']);
        break;
      default:
        // `user` (tool results), `stream_event`, and types this build doesn't know are tolerated.
        break;
    }
    // A resume of an unknown id prints only a `result`, with no `system/init` before it.
    if (this.state.sessionId === undefined && typeof event['session_id'] === 'string') {
      this.state.sessionId = event['session_id'];
    }
  }

  facts(): StreamFacts {
    const facts: StreamFacts = { ...this.state, notices: [...this.state.notices] };
    if (this.state.usageInvalid !== undefined) delete facts.usage;
    else if (this.state.usage) {
      const usage: UsageJson = { ...this.state.usage };
      const cost = this.costIncrementsUsd ?? this.processCostUsd;
      if (cost !== undefined) usage.costUsd = cost;
      facts.usage = usage;
    }
    if (this.denials.size > 0) facts.denials = [...this.denials.values()].map((d) => ({ ...d }));
    facts.live = this.live.facts();
    return facts;
  }

  /**
   * `user` events (tool results: most of a run's bytes) and `stream_event`s change no fact once the
   * session id is known, and are spooled unparsed; before it, every event is parsed (a resume of
   * an unknown id names its session only on its events).
   */
  reads(event: SniffedEvent): boolean {
    if (this.state.sessionId === undefined) return true;
    return event.type !== 'user' && event.type !== 'stream_event';
  }

  skipped(): void {
    this.state.eventCount += 1;
  }

  private system(event: Record<string, unknown>): void {
    if (event['subtype'] === 'init') {
      if (typeof event['session_id'] === 'string') this.state.sessionId = event['session_id'];
    } else if (event['subtype'] === 'api_retry') {
      this.notice(describeRetry(event));
    } else if (event['subtype'] === 'permission_denied') {
      const id = typeof event['tool_use_id'] === 'string' ? event['tool_use_id'] : `denial-${this.denials.size}`;
      const tool = typeof event['tool_name'] === 'string' ? event['tool_name'] : undefined;
      this.deny(id, tool, this.toolInputs.get(id));
    }
  }

  private assistant(event: Record<string, unknown>): void {
    const message = event['message'];
    const params = event['api_error_params'];
    if (event['api_error'] === 'usage_limit_reached' && isRecord(params)) this.rateLimit(params['rate_limit_info']);
    if (!isRecord(message) || message['model'] === '<synthetic>') return;
    const content = Array.isArray(message['content']) ? message['content'] : [];
    for (const block of content) {
      if (
        isRecord(block) &&
        block['type'] === 'tool_use' &&
        typeof block['id'] === 'string' &&
        isRecord(block['input'])
      ) {
        this.toolInputs.set(block['id'], block['input']);
      }
      if (isRecord(block) && block['type'] === 'tool_use' && typeof block['name'] === 'string')
        this.trackTool(block['name'], isRecord(block['input']) ? block['input'] : {});
    }
    // Live tokens: each assistant message's usage once (the latest value for its id).
    const live = isRecord(message['usage']) ? readUsage(message['usage']) : undefined;
    if (typeof message['id'] === 'string' && live && !isInvalidUsage(live)) {
      const usage = live;
      const tokens = usage.inputTokens + usage.outputTokens;
      this.messageTokensSum += tokens - (this.messageTokens.get(message['id']) ?? 0);
      this.messageTokens.set(message['id'], tokens);
      this.live.tokensSoFar(this.messageTokensSum);
    }
    if (event['parent_tool_use_id'] !== null && event['parent_tool_use_id'] !== undefined) return;
    const texts = content.flatMap((block) =>
      isRecord(block) && block['type'] === 'text' && typeof block['text'] === 'string' ? [block['text']] : [],
    );
    const text = texts.join('\n\n');
    if (text.trim() !== '') this.state.finalMessage = text;
  }

  private result(event: Record<string, unknown>): void {
    const resultText =
      typeof event['result'] === 'string' && event['result'].trim() !== '' ? event['result'] : undefined;
    const subtype = typeof event['subtype'] === 'string' ? event['subtype'] : undefined;
    const completed = event['is_error'] === false && (subtype === undefined || subtype === 'success');
    if (completed) {
      this.state.terminal = { kind: 'completed' };
      if (this.state.finalMessage === undefined && resultText !== undefined) this.state.finalMessage = resultText;
    } else {
      const message = resultText ?? joinErrors(event['errors']) ?? describeSubtype(subtype, event['is_error']);
      const reason =
        subtype === 'error_max_turns'
          ? 'max_turns'
          : subtype === 'error_max_budget_usd'
            ? 'budget_exceeded'
            : event['api_error'] === 'usage_limit_reached'
              ? 'quota_exhausted'
              : undefined;
      if (reason === 'quota_exhausted') this.state.quota = { ...this.state.quota, exhausted: true };
      this.state.terminal = reason ? { kind: 'failed', message, reason } : { kind: 'failed', message };
    }
    // Figures no CLI could mean make the run's usage unknown for good: a sum with them is no figure.
    const usage = isRecord(event['usage']) ? readUsage(event['usage']) : undefined;
    const increment = costSinceLastResult(event['model_usage_since_last_result']);
    const total = readCostFigure(event['total_cost_usd'], 'total_cost_usd');
    const invalid = [usage, increment, total].find(isInvalidUsage);
    if (invalid) this.state.usageInvalid ??= invalid.invalid;
    if (this.state.usageInvalid === undefined) {
      if (usage && !isInvalidUsage(usage)) this.state.usage = addUsage(this.state.usage, usage);
      if (this.state.usage) this.live.tokensSoFar(this.state.usage.inputTokens + this.state.usage.outputTokens);
      if (typeof increment === 'number') this.costIncrementsUsd = (this.costIncrementsUsd ?? 0) + increment;
      if (typeof total === 'number') this.processCostUsd = total;
    }
    if (Array.isArray(event['permission_denials'])) {
      for (const raw of event['permission_denials']) {
        const denial = isRecord(raw) ? raw : {};
        const id = typeof denial['tool_use_id'] === 'string' ? denial['tool_use_id'] : `denial-${this.denials.size}`;
        this.deny(
          id,
          typeof denial['tool_name'] === 'string' ? denial['tool_name'] : undefined,
          isRecord(denial['tool_input']) ? denial['tool_input'] : undefined,
        );
      }
    }
  }

  /** A tool the agent started: the live step (every tool, reads included) and the files its edit tools change. */
  private trackTool(name: string, input: Record<string, unknown>): void {
    const path = [input['file_path'], input['notebook_path']].find((v): v is string => typeof v === 'string');
    if (path !== undefined && ['Write', 'Edit', 'MultiEdit', 'NotebookEdit'].includes(name))
      this.live.fileChanged(path);
    const detail = [
      input['command'],
      input['file_path'],
      input['notebook_path'],
      input['path'],
      input['pattern'],
      input['url'],
      input['query'],
      input['description'],
    ].find((v): v is string => typeof v === 'string' && v.trim() !== '');
    this.live.stepStarted(describeToolUse(name, input) ?? (detail ? `${name} ${detail}` : name));
  }

  private deny(toolUseId: string, tool: string | undefined, input: Record<string, unknown> | undefined): void {
    const known = this.denials.get(toolUseId);
    const denial = describeDenial(tool ?? known?.tool, input);
    // The result's entry carries the input that a live `permission_denied` may have lacked.
    if (!known || (known.detail === undefined && denial.detail !== undefined)) this.denials.set(toolUseId, denial);
  }

  /** A `rate_limit_info`: the windows replace the earlier ones; a rejected one's reset is the run's. */
  private rateLimit(info: unknown): void {
    const read = claudeRateLimitInfoOf(info);
    if (!read) return;
    const rejected = isRecord(info) && info['status'] === 'rejected';
    const quota = { ...this.state.quota, exhausted: this.state.quota?.exhausted ?? false };
    if (read.windows.length > 0) quota.windows = read.windows;
    if (rejected && read.resetsAt) quota.resetsAt = read.resetsAt;
    this.state.quota = quota;
  }

  private notice(message: string): void {
    this.state.notices.push(message);
    if (this.state.notices.length > MAX_NOTICES) this.state.notices.shift();
  }
}
