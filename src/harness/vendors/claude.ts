/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). Flags and events as measured on
 * claude 2.1.197 (and the notes below).
 */
import { readFile } from 'node:fs/promises';
import type { DenialJson, UsageJson } from '../../store/schema.js';
import { isInvalidUsage, readCostFigure, readTokenFigures, type InvalidUsage } from './usage-figures.js';
import { shellQuote } from '../shell-quote.js';
import { LiveTracker } from './live.js';
import { APPROVAL_PROMPT_TOOL } from '../approval-names.js';
import type { LaunchContext, LaunchRequest, StreamFacts, StreamReducer, Vendor, VendorHomes } from './types.js';
import type { SniffedEvent } from '../json-lines.js';

const MAX_NOTICES = 20;
/** Flag settings (highest precedence below admin policy) that make bypass mode unavailable. */
const NO_BYPASS_SETTINGS = JSON.stringify({ permissions: { disableBypassPermissionsMode: 'disable' } });
/** Longest tool input echoed in a permission-denial notice, in characters. */
const MAX_DENIAL_DETAIL_CHARS = 160;

/**
 * The Claude Code vendor.
 *
 * argv: `-p --output-format=stream-json --verbose [--model=M] [--permission-mode=P]
 * [--resume=SESSION] --input-format=stream-json`; the task goes on stdin ({@link
 * claudeVendor.stdinPayload}), so no prompt such as `-x` or `--help` is ever parsed as a flag.
 * Measured on claude 2.1.197 (commander-style option parsing), when prompts were on argv: a
 * prompt had to follow `--`; `-p -x` and `-p=-x` are `error: unknown option` (rc 1).
 * - Values use `--flag=value`: the variadic flags (`--add-dir`, `--allowedTools`) in their
 *   space form swallow a following prompt ("Input must be provided …", rc 1), their `=` form
 *   takes exactly one value; `--` ends them too.
 *
 * `posture` is passed as `--permission-mode` (`default`, `acceptEdits`, `auto`, `dontAsk`,
 * `plan`, `bypassPermissions`); `manual`, 2.1.332's name for `default`, is passed as `default`,
 * which 2.1.197 requires (it rejects `manual`, rc 1) and 2.1.332 keeps as an alias. In `-p`, `default` blocks a Bash command that writes a file
 * (reported in `permission_denials`), `acceptEdits` and `auto` let it write inside the cwd,
 * `dontAsk` denies Bash outright.
 *
 * A repository is untrusted input. Measured on 2.1.197 (and 2.1.332 for the first
 * two): a repository's `.claude/settings.json` / `settings.local.json` can set `env`
 * (`ANTHROPIC_BASE_URL`: the owner's key goes to a server the repository names), hooks that run
 * at start, `permissions.defaultMode: "bypassPermissions"`, and enable the servers of its
 * `.mcp.json`, which claude then starts. So every run gets:
 * - `--setting-sources=user`: only the owner's `$CLAUDE_CONFIG_DIR/settings.json` loads (plus
 *   admin policy, which claude always applies); project and local settings, and with them the
 *   project's MCP servers, do not.
 * - `--settings={"permissions":{"disableBypassPermissionsMode":"disable"}}`: bypass mode cannot be
 *   switched on by any settings file, the owner's included, nor by `--permission-mode` (measured:
 *   the run stays in `default`). baton refuses that posture anyway.
 *
 * Tool approvals: a run with `approvalMcpConfig` gets `--strict-mcp-config
 * --mcp-config=<run dir>/mcp.json --permission-prompt-tool=mcp__baton__approve`. Measured on
 * claude 2.1.332 against the fake Anthropic server (a `tool_use` of Bash, `--permission-mode=default`,
 * `--setting-sources=user`):
 * - `--permission-prompt-tool` is accepted but not listed in `--help`; `--strict-mcp-config`
 *   ("Only use MCP servers from --mcp-config, ignoring all other MCP configurations") is. The
 *   server from the file starts (`system/init.mcp_servers`: `{"name":"baton","status":"connected",
 *   "source":"dynamic"}`), and the permission tool is not offered to the model (`init.tools`
 *   holds no `mcp__` name).
 * - claude spawns the server with the file's `command`/`args`/`env` on top of its own
 *   environment (which holds `ANTHROPIC_API_KEY` and the other `env` of the owner's
 *   settings), cwd = the run's cwd.
 * - Before a tool call the mode would ask about, claude calls the tool (MCP `tools/call`) with
 *   arguments `{"tool_name":"Bash","input":{"command":"printf hi > out.txt","description":"write"},
 *   "tool_use_id":"toolu_fake_1"}` (and `_meta["claudecode/toolUseId"]`): `input` is the
 *   model's tool input as is, `tool_use_id` the `tool_use` block's id.
 * - It expects one text content whose text is JSON: `{"behavior":"allow","updatedInput":{…}}`
 *   runs the call with `updatedInput` (`{"behavior":"allow"}` without it also ran it, with the
 *   original input); the tool result then carries `permission_decision: {decision:"accept",
 *   source:"user_temporary"}`. `{"behavior":"deny","message":M}` skips the call, the model
 *   gets `M` as an error `tool_result`, and the `result` lists the call in
 *   `permission_denials` (so the outcome's denial list shows it).
 * - claude waits for the answer: a tool that answered after 20 s was waited for (no MCP timeout
 *   hit), so the owner's decision can take minutes (`approval_timeout_minutes` bounds it).
 */
export const claudeVendor: Vendor = {
  name: 'claude',
  binaryName: 'claude',
  supportsApprovals: true,
  // `--setting-sources=user` (below) also keeps claude from reading these; measured on 2.1.332:
  // the project's CLAUDE.md then did not reach the request's system prompt.
  instructionFiles: ['CLAUDE.md', '.claude/CLAUDE.md'],

  buildArgv(request: LaunchRequest, _context: LaunchContext): string[] {
    const argv = [
      '-p',
      '--output-format=stream-json',
      '--verbose',
      '--setting-sources=user',
      `--settings=${NO_BYPASS_SETTINGS}`,
    ];
    if (request.model) argv.push(`--model=${request.model}`);
    if (request.posture) argv.push(`--permission-mode=${permissionMode(request.posture)}`);
    if (request.resumeSessionId) argv.push(`--resume=${request.resumeSessionId}`);
    if (request.approvalMcpConfig) {
      argv.push(
        '--strict-mcp-config',
        `--mcp-config=${request.approvalMcpConfig}`,
        `--permission-prompt-tool=${APPROVAL_PROMPT_TOOL}`,
      );
    }
    // Both measured on 2.1.332 against the fake Anthropic server: past the cap the CLI ends with a
    // `result` of subtype `error_max_budget_usd` / `error_max_turns`, `is_error: true`, rc 1.
    // `--max-turns` is not listed by 2.1.332's `claude --help` but is honoured (test/e2e/budget-caps.test.ts).
    if (request.maxBudgetUsd !== undefined) argv.push(`--max-budget-usd=${request.maxBudgetUsd}`);
    if (request.maxTurns !== undefined) argv.push(`--max-turns=${request.maxTurns}`);
    // Listed by 2.1.332's `claude --help` only under --bare ("--append-system-prompt[-file]");
    // measured: the file's text ends the request's `system` blocks, with settings still user-only.
    if (request.instructionsFile) argv.push(`--append-system-prompt-file=${request.instructionsFile}`);
    argv.push('--input-format=stream-json');
    return argv;
  },

  /**
   * One stream-json user message (`--input-format=stream-json`): the prompt as a text block, and
   * an `image` block (base64) per image — claude has no image flag; measured on 2.1.197 (and
   * 2.1.332), the Messages request then carries the image bytes.
   *
   * Why stream-json for every task, measured on 2.1.332 against the fake Messages
   * server, stdin pipe left open before the message was written: with a plain-text prompt on
   * stdin claude waits at most 3 s for its first byte, then prints "Warning: no stdin data
   * received in 3s" and exits 1 ("Input must be provided …"); with stream-json input it waits
   * for its first message without a limit. In both it made no model request and changed nothing
   * in the working directory while it waited; the first model call came ~210 ms after the write
   * (stream-json, ~350 ms as plain text) against ~420-440 ms from spawn with the task written at
   * once (median of 5, load ~3): about half of its start happens before it reads its task.
   */
  async stdinPayload(request: LaunchRequest): Promise<string> {
    const images = await Promise.all(
      (request.images ?? []).map(async (image) => ({
        type: 'image',
        source: { type: 'base64', media_type: image.mediaType, data: (await readFile(image.path)).toString('base64') },
      })),
    );
    const message = {
      type: 'user',
      message: { role: 'user', content: [{ type: 'text', text: request.prompt }, ...images] },
    };
    return `${JSON.stringify(message)}\n`;
  },

  /** Only the config dir: `ANTHROPIC_API_KEY` is passed only in an API-key mode. */
  vendorEnv(homes: VendorHomes): Record<string, string> {
    return { CLAUDE_CONFIG_DIR: homes.claudeConfigDir };
  },

  newReducer(): StreamReducer {
    return new ClaudeReducer();
  },

  resumeCommand(cwd: string, sessionId: string): string {
    return `cd ${shellQuote(cwd)} && claude --resume ${shellQuote(sessionId)}`;
  },

  /**
   * Not logged in. Measured on 2.1.332 with an empty CLAUDE_CONFIG_DIR and no ANTHROPIC_API_KEY:
   * after `system/init`, a synthetic `assistant` message (model `<synthetic>`) whose text is
   * `Not logged in · Please run /login`, with `error: "authentication_failed"` and
   * `is_api_error_message: true` beside `message`, then a `result` with `is_error: true`,
   * `terminal_reason: "api_error"` and the same words; stderr is empty, exit status 1. Only the
   * envelope's `error` (claude's, never the agent's text) is matched, so an agent that writes these
   * words is not taken for a login failure.
   */
  describeAuthFailure(source: { event: unknown } | { stderr: string }): string | undefined {
    if (!('event' in source)) return undefined;
    const e = source.event;
    if (
      !isRecord(e) ||
      e['type'] !== 'assistant' ||
      e['error'] !== 'authentication_failed' ||
      e['is_api_error_message'] !== true
    )
      return undefined;
    const message = e['message'];
    const content = isRecord(message) && Array.isArray(message['content']) ? message['content'] : [];
    const text = content
      .map((block: unknown) =>
        isRecord(block) && block['type'] === 'text' && typeof block['text'] === 'string' ? block['text'] : '',
      )
      .join(' ')
      .trim();
    return (text || 'authentication_failed').slice(0, 300);
  },

  loginFix(home: string): string {
    return `Log claude in as the user baton runs as: run CLAUDE_CONFIG_DIR=${home} claude once and log in (/login), or set [harness] claude_config_dir to a config dir that is logged in; then send the task again.`;
  },

  /** `system/api_retry` events, in the words the outcome's notices use. */
  describeRetry(event: unknown): string | undefined {
    return isRecord(event) && event['type'] === 'system' && event['subtype'] === 'api_retry'
      ? describeRetry(event)
      : undefined;
  },

  /** Milestones from the `tool_use` blocks of `assistant` messages (tool names as offered by claude 2.1.197). */
  describeProgress(event: unknown): string | undefined {
    if (!isRecord(event) || event['type'] !== 'assistant' || !isRecord(event['message'])) return undefined;
    const content = event['message']['content'];
    if (!Array.isArray(content)) return undefined;
    const milestones = content.flatMap((block) => {
      if (!isRecord(block) || block['type'] !== 'tool_use' || typeof block['name'] !== 'string') return [];
      const milestone = describeToolUse(block['name'], isRecord(block['input']) ? block['input'] : {});
      return milestone ? [milestone] : [];
    });
    return milestones.length > 0 ? milestones.join('; ') : undefined;
  },
};

/** The `--permission-mode` value every supported claude version accepts for `posture`. */
function permissionMode(posture: string): string {
  return posture === 'manual' ? 'default' : posture;
}

/** A milestone for tools that change things or reach outside the repo; reads and searches are not worth one. */
function describeToolUse(name: string, input: Record<string, unknown>): string | undefined {
  const field = (key: string): string | undefined => {
    const value = input[key];
    return typeof value === 'string' ? truncate(oneLine(value), 80) : undefined;
  };
  const command = field('command');
  const path = field('file_path') ?? field('notebook_path');
  switch (name) {
    case 'Bash':
      return command && `running ${command}`;
    case 'Write':
      return path && `writing ${path}`;
    case 'Edit':
    case 'MultiEdit':
    case 'NotebookEdit':
      return path && `editing ${path}`;
    case 'WebSearch': {
      const query = field('query');
      return query && `searched the web for ${query}`;
    }
    case 'WebFetch': {
      const url = field('url');
      return url && `fetching ${url}`;
    }
    case 'Task':
    case 'Agent': {
      const description = field('description');
      return description ? `started a sub-agent: ${description}` : 'started a sub-agent';
    }
    default: {
      // MCP tools are named `mcp__<server>__<tool>`.
      const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
      return mcp ? `tool ${mcp[1] ?? ''}/${mcp[2] ?? ''}` : undefined;
    }
  }
}

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
 */
class ClaudeReducer implements StreamReducer {
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
            : undefined;
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

  private notice(message: string): void {
    this.state.notices.push(message);
    if (this.state.notices.length > MAX_NOTICES) this.state.notices.shift();
  }
}

function describeRetry(event: Record<string, unknown>): string {
  const attempt = typeof event['attempt'] === 'number' ? String(event['attempt']) : '?';
  const max = typeof event['max_retries'] === 'number' ? `/${event['max_retries']}` : '';
  const status = typeof event['error_status'] === 'number' ? ` ${event['error_status']}` : '';
  const error = typeof event['error'] === 'string' ? ` ${event['error']}` : '';
  return `API retry ${attempt}${max}:${status}${error}`.replace(/:$/, '');
}

/** A denied call as the owner reads it: the tool, and its command, path or URL cut to one line. */
function describeDenial(tool: string | undefined, input: Record<string, unknown> | undefined): DenialJson {
  const fields = input ?? {};
  const detail = [
    fields['command'],
    fields['file_path'],
    fields['notebook_path'],
    fields['path'],
    fields['url'],
    fields['pattern'],
  ].find((v): v is string => typeof v === 'string');
  const denial: DenialJson = { tool: tool ?? 'a tool' };
  if (detail !== undefined) denial.detail = truncate(oneLine(detail), MAX_DENIAL_DETAIL_CHARS);
  return denial;
}

/** Sum of `costUSD` over the models of 2.1.332's `model_usage_since_last_result`, or undefined without it. */
function costSinceLastResult(raw: unknown): number | undefined | InvalidUsage {
  if (!isRecord(raw)) return undefined;
  let sum = 0;
  for (const model of Object.values(raw)) {
    const cost = isRecord(model) ? readCostFigure(model['costUSD'], 'costUSD') : undefined;
    if (isInvalidUsage(cost)) return cost;
    if (cost !== undefined) sum += cost;
  }
  return sum;
}

function addUsage(a: UsageJson | undefined, b: UsageJson): UsageJson {
  if (!a) return b;
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    cachedInputTokens: a.cachedInputTokens + b.cachedInputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
  };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1)}…`;
}

function joinErrors(raw: unknown): string | undefined {
  if (!Array.isArray(raw)) return undefined;
  const errors = raw.filter((e): e is string => typeof e === 'string' && e.trim() !== '');
  return errors.length > 0 ? errors.join('; ') : undefined;
}

/** Words for a failed result that carried neither `result` text nor `errors` (the subtypes claude 2.1.197 emits). */
function describeSubtype(subtype: string | undefined, isError: unknown): string {
  switch (subtype) {
    case 'error_max_turns':
      return 'claude stopped: it reached the maximum number of turns.';
    case 'error_max_budget_usd':
      return 'claude stopped: it reached the maximum budget.';
    case 'error_during_execution':
      return 'claude stopped with an error during execution.';
    case undefined:
    case 'success':
      return typeof isError === 'boolean'
        ? 'claude reported an error without a message.'
        : 'claude printed a result without is_error.';
    default:
      return `claude ended with ${subtype}.`;
  }
}

function readUsage(u: Record<string, unknown>): UsageJson | InvalidUsage {
  const figures = readTokenFigures(u, [
    'input_tokens',
    'cache_creation_input_tokens',
    'cache_read_input_tokens',
    'output_tokens',
  ] as const);
  if (isInvalidUsage(figures)) return figures;
  const usage: UsageJson = {
    inputTokens: figures.input_tokens + figures.cache_creation_input_tokens + figures.cache_read_input_tokens,
    cachedInputTokens: figures.cache_read_input_tokens,
    outputTokens: figures.output_tokens,
  };
  return usage;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
