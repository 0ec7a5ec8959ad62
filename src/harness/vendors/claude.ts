/**
 * Claude Code (`claude -p --output-format stream-json --verbose`). Flags and events as measured on
 * claude 2.1.197 (and the notes below).
 */
import { readFile } from 'node:fs/promises';
import { shellQuote } from '../shell-quote.js';
import { APPROVAL_PROMPT_TOOL } from '../approval-names.js';
import type { LaunchContext, LaunchRequest, StreamReducer, Vendor, VendorHomes } from './types.js';
import { ClaudeReducer } from './claude-reducer.js';
import { describeRetry, describeToolUse, isRecord } from './claude-events.js';
import { claudeTranscript } from './claude-transcript.js';

/** Flag settings (highest precedence below admin policy) that make bypass mode unavailable. */
const NO_BYPASS_SETTINGS = JSON.stringify({ permissions: { disableBypassPermissionsMode: 'disable' } });

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

  /**
   * Measured on 2.1.332 against the fake Messages server, stdin left open after the task: a user
   * message written while the first turn's model call was open was read, not lost; once that turn
   * printed its `result`, claude printed a second `system/init` (same session id), made a second
   * model call holding both user messages and both answers, and printed a second `result`; it then
   * waited for more input, and exited 0 once stdin was closed. Two messages written during one
   * turn were taken together into one next turn (one `system/init`, one model call, one
   * `result`): the messages written since a turn's `system/init` make at most one more turn.
   * `{"type":"control_request","request_id":ID,"request":{"subtype":"interrupt"}}` during a turn:
   * a `control_response` (`subtype: success`) within ~60 ms, then a `result` of subtype
   * `error_during_execution`; with stdin then closed claude exited (status 1) ~140 ms later.
   */
  stdinTurns: {
    message: (text) => `${JSON.stringify(userMessage([{ type: 'text', text }]))}\n`,
    interrupt: (requestId) =>
      `${JSON.stringify({ type: 'control_request', request_id: requestId, request: { subtype: 'interrupt' } })}\n`,
    turnStarted: (event) => isRecord(event) && event['type'] === 'system' && event['subtype'] === 'init',
    turnEnded: (event) => isRecord(event) && event['type'] === 'result',
  },

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
    return `${JSON.stringify(userMessage([{ type: 'text', text: request.prompt }, ...images]))}\n`;
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

  transcript: claudeTranscript,

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

/** One stream-json user message (`--input-format=stream-json`) of `content` blocks. */
function userMessage(content: readonly Record<string, unknown>[]): Record<string, unknown> {
  return { type: 'user', message: { role: 'user', content } };
}

/** The `--permission-mode` value every supported claude version accepts for `posture`. */
function permissionMode(posture: string): string {
  return posture === 'manual' ? 'default' : posture;
}
