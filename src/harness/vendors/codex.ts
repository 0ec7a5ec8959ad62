/**
 * The Codex CLI (`codex exec --json`). Flags and events as measured on codex-cli 0.171.0.
 *
 */
import { dirname } from 'node:path';
import type { UsageJson } from '../../store/schema.js';
import { shellQuote } from '../shell-quote.js';
import { LiveTracker } from './live.js';
import { codexLimitOf } from './quota.js';
import type {
  LaunchContext,
  LaunchRequest,
  ReducerContext,
  StreamFacts,
  StreamReducer,
  Vendor,
  VendorHomes,
} from './types.js';
import { isInvalidUsage, ownUsage, readTokenFigures, type InvalidUsage } from './usage-figures.js';
import type { SniffedEvent } from '../json-lines.js';
import { codexTranscript } from './codex-transcript.js';

const MAX_NOTICES = 20;

/**
 * codex's words for refused credentials (see `codexVendor.describeAuthFailure`): its model
 * client's "unexpected status 401", not any 401 (a remote MCP server's expired token is reported
 * in the same kind of event, "MCP client for `x` failed to start: … (401 Unauthorized) …", and
 * the run goes on without that server).
 */
const CODEX_AUTH_FAILURE = /\bunexpected status 401\b|\bnot logged in\b/i;
/** Lines about an MCP server, never about codex's own login. */
const MCP_LINE = /\bMCP\b/;

/**
 * The Codex vendor.
 *
 * A repository's own `.codex/config.toml` is untrusted input. Measured on codex-cli 0.171.0:
 * codex layers it over the owner's config once the owner has trusted that project
 * (`[projects."<git root>"] trust_level = "trusted"` in `$CODEX_HOME/config.toml`), and then it
 * can set `sandbox_mode = "danger-full-access"`, `notify`, and
 * `sandbox_workspace_write.writable_roots` (which an explicit `--sandbox workspace-write` does not
 * override). Every run therefore marks its working directory and each of its ancestors untrusted
 * for this invocation only (`-c projects={…}`, merged over the owner's table; codex keys trust by
 * project root, which is one of them), so no project layer loads and only the owner's own config
 * and baton's flags apply. Nothing is written to the owner's config.
 */
export const codexVendor: Vendor = {
  name: 'codex',
  binaryName: 'codex',
  // Measured: codex refuses more than 1,048,576 characters of input.
  maxStdinPromptChars: 1_048_576,

  buildArgv(request: LaunchRequest, context: LaunchContext): string[] {
    // Exec-level flags must precede `resume` (after it, -s/-C are usage errors, rc 2).
    const argv = ['exec', '--json', '--skip-git-repo-check', '-c', untrustedProjects(context.cwd)];
    if (request.model) argv.push('-m', request.model);
    // `--image=FILE`, one per image: `-i` takes several values and would swallow the prompt
    // (measured on 0.171.0; `exec resume` takes the same flag). codex decodes each
    // image and silently leaves out one it cannot decode (measured: a PNG with a bad CRC), which
    // is why baton only passes files whose magic bytes name an image type.
    for (const image of request.images ?? []) argv.push(`--image=${image.path}`);
    // `-` reads the prompt from stdin (`codex exec --help`); `--` keeps it from being read as a flag.
    if (request.resumeSessionId) {
      if (request.posture) argv.push('-c', `sandbox_mode=${JSON.stringify(request.posture)}`);
      argv.push('resume', request.resumeSessionId, '--', '-');
      return argv;
    }
    if (request.posture) argv.push('--sandbox', request.posture);
    argv.push('--', '-');
    return argv;
  },

  vendorEnv(homes: VendorHomes): Record<string, string> {
    return { CODEX_HOME: homes.codexHome };
  },

  /**
   * The prompt as is. Measured on codex-cli 0.171.0 against the fake Responses server (
   * `codex exec --json … -- -` with a stdin pipe left open 1 s and 5 s before the prompt was
   * written): no model request and no change in the working directory while it waited, no
   * timeout (it waits for EOF however long), and the first model call came ~110 ms after the
   * write, against ~205 ms from spawn with the prompt written at once (median of 5, load ~2-3):
   * ~90 ms of its start happens before it reads stdin.
   */
  async stdinPayload(request: LaunchRequest): Promise<string> {
    return request.prompt;
  },

  newReducer(context?: ReducerContext): StreamReducer {
    return new CodexReducer(context?.sessionUsageBefore);
  },

  resumeCommand(cwd: string, sessionId: string): string {
    return `cd ${shellQuote(cwd)} && codex exec resume ${shellQuote(sessionId)} --json`;
  },

  /** codex's `error` lines while it retries ("Reconnecting... 2/5 …"); measured on 0.171.0. */
  describeRetry(event: unknown): string | undefined {
    const e = event as { type?: unknown; message?: unknown };
    return e.type === 'error' && typeof e.message === 'string' && /^Reconnecting/i.test(e.message)
      ? e.message
      : undefined;
  },

  /**
   * A 401 from the model server. Measured on 0.171.0 with no login against a server answering
   * 401: `{"type":"error","message":"Reconnecting... 1/5 (unexpected status 401 Unauthorized:
   * Missing bearer or basic authentication in header, url: …)"}`, five of them per transport
   * (WebSocket, then HTTPS) with growing pauses, then `turn.failed` with the same words; stderr
   * says nothing more. "not logged in" is what `codex login status` prints.
   */
  describeAuthFailure(source: { event: unknown } | { stderr: string }): string | undefined {
    let text: unknown;
    if ('stderr' in source) text = source.stderr;
    else {
      const e = source.event as {
        type?: unknown;
        message?: unknown;
        error?: { message?: unknown };
        item?: { type?: unknown; message?: unknown };
      };
      text =
        e.type === 'error'
          ? e.message
          : e.type === 'turn.failed'
            ? e.error?.message
            : e.type === 'item.completed' && e.item?.type === 'error'
              ? e.item.message
              : undefined;
    }
    return codexAuthFailureLine(text);
  },

  loginFix(home: string): string {
    return `Log codex in as the user baton runs as: CODEX_HOME=${home} codex login (or codex login --with-api-key), or set [harness] codex_home to a CODEX_HOME that is logged in; then send the task again.`;
  },

  transcript: codexTranscript,

  describeProgress(event: unknown): string | undefined {
    const e = event as { type?: unknown; item?: Record<string, unknown> };
    const item = e.item;
    if (!item) return undefined;
    if (e.type === 'item.started' && item.type === 'command_execution' && typeof item.command === 'string') {
      return `running ${truncate(item.command, 80)}`;
    }
    if (e.type !== 'item.completed') return undefined;
    if (item.type === 'file_change' && Array.isArray(item.changes)) {
      const paths = item.changes
        .map((c) => (c as { path?: unknown }).path)
        .filter((p): p is string => typeof p === 'string');
      return `changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${truncate(paths.join(', '), 80)})`;
    }
    if (item.type === 'mcp_tool_call' && typeof item.tool === 'string')
      return `tool ${String(item.server ?? '')}/${item.tool}`;
    if (item.type === 'web_search' && typeof item.query === 'string')
      return `searched the web for ${truncate(item.query, 60)}`;
    return undefined;
  },
};

/**
 * The line of codex's `text` that says its model client's credentials were refused (see
 * `codexVendor.describeAuthFailure`), without the retry wrapper and cut to 300 characters, or
 * undefined.
 */
export function codexAuthFailureLine(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const line = text.split('\n').find((l) => CODEX_AUTH_FAILURE.test(l) && !MCP_LINE.test(l));
  return line === undefined
    ? undefined
    : line
        .replace(/^Reconnecting\.\.\. \d+\/\d+ \((.*)\)$/, '$1')
        .trim()
        .slice(0, 300);
}

/**
 * The `-c` override that marks `cwd` and every ancestor of it untrusted: a TOML inline table,
 * `projects={"/a/b"={trust_level="untrusted"},"/a"={…},"/"={…}}`, each path a TOML basic string
 * ({@link tomlString}).
 *
 * @param cwd an absolute path.
 */
export function untrustedProjects(cwd: string): string {
  const dirs: string[] = [];
  for (let dir = cwd; ; dir = dirname(dir)) {
    dirs.push(dir);
    if (dirname(dir) === dir) break;
  }
  return `projects={${dirs.map((dir) => `${tomlString(dir)}={trust_level="untrusted"}`).join(',')}}`;
}

/**
 * A TOML basic string holding `text` exactly: `"` and `\` escaped, and every control character
 * TOML forbids in a basic string (U+0000–U+001F and U+007F; JSON allows U+007F raw) as `\uXXXX`.
 */
export function tomlString(text: string): string {
  const escaped = text.replace(/["\\\u0000-\u001f\u007f]/g, (c) =>
    c === '"' || c === '\\' ? `\\${c}` : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}

/** Folds `codex exec --json` events: `thread.started`, `item.*`, `turn.completed|failed`, `error`. */
class CodexReducer implements StreamReducer {
  private readonly state: StreamFacts = { notices: [], eventCount: 0 };
  private readonly live = new LiveTracker();
  /** @param sessionUsageBefore a resumed session's usage when the run began: codex reports the session's totals. */
  constructor(private readonly sessionUsageBefore?: UsageJson) {}

  push(event: unknown): void {
    this.state.eventCount += 1;
    const e = event as Record<string, unknown>;
    this.track(e);
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string') this.state.sessionId = e.thread_id;
        break;
      case 'item.completed':
        this.item(e.item);
        break;
      case 'turn.completed': {
        const reported = readUsage(e.usage);
        const usage = isInvalidUsage(reported) ? reported : ownUsage(reported, this.sessionUsageBefore);
        if (isInvalidUsage(usage)) {
          delete this.state.usage;
          this.state.usageInvalid = usage.invalid;
        } else {
          this.state.usage = usage;
          delete this.state.usageInvalid;
          // The session's totals so far less the part before this run: the run's live count.
          this.live.tokensSoFar(usage.inputTokens + usage.outputTokens);
        }
        this.state.terminal = { kind: 'completed' };
        break;
      }
      case 'turn.failed': {
        const error = e.error as { message?: unknown } | undefined;
        const message = typeof error?.message === 'string' ? error.message : 'codex reported turn.failed';
        const quota = codexLimitOf(message, new Date());
        this.state.terminal = quota
          ? { kind: 'failed', message, reason: 'quota_exhausted' }
          : { kind: 'failed', message };
        if (quota) this.state.quota = quota;
        break;
      }
      case 'error':
        // Retries ("Reconnecting... 1/5") and warnings: notices, never fatal by themselves. The
        // last one is codex's own words for a run that then ends without a terminal event.
        if (typeof e.message === 'string') {
          this.notice(e.message);
          this.state.lastError = e.message;
        }
        break;
      default:
        // turn.started, item.started/updated and types this build doesn't know are tolerated.
        break;
    }
  }

  facts(): StreamFacts {
    return { ...this.state, notices: [...this.state.notices], live: this.live.facts() };
  }

  /**
   * Live facts (codex-cli 0.171.0 `--json`): a step per `item.started` command, MCP tool call or
   * web search; changed paths from `file_change` items; tokens from each `turn.completed` (codex
   * reports none before a turn ends; see `push`).
   */
  private track(e: Record<string, unknown>): void {
    const item = e.item as Record<string, unknown> | undefined;
    if (e.type === 'item.started' && item) {
      if (item.type === 'command_execution' && typeof item.command === 'string')
        this.live.stepStarted(`running ${unwrapShell(item.command)}`);
      else if (item.type === 'mcp_tool_call' && typeof item.tool === 'string')
        this.live.stepStarted(`tool ${String(item.server ?? '')}/${item.tool}`);
      else if (item.type === 'web_search')
        this.live.stepStarted(
          typeof item.query === 'string' && item.query !== ''
            ? `searching the web for ${item.query}`
            : 'searching the web',
        );
    } else if (e.type === 'item.completed' && item?.type === 'file_change' && Array.isArray(item.changes)) {
      for (const change of item.changes) {
        const path = (change as { path?: unknown }).path;
        if (typeof path === 'string') this.live.fileChanged(path);
      }
    }
  }

  /**
   * Only these change the facts: `item.completed` of an `agent_message`, `error` or `file_change`
   * item (files changed, for the live status), `item.started` of a command, MCP tool call or web
   * search (the live status's current step), and the non-item events. `turn.started`,
   * `item.updated` and the other completed items (command output, reasoning: most of a chatty
   * run's bytes) are spooled unparsed. An item whose type the sniff could not read is parsed.
   */
  reads(event: SniffedEvent): boolean {
    switch (event.type) {
      case 'turn.started':
      case 'item.updated':
        return false;
      case 'item.started':
        return event.itemType === undefined || LIVE_STEP_ITEMS.has(event.itemType);
      case 'item.completed':
        return (
          event.itemType === undefined ||
          event.itemType === 'agent_message' ||
          event.itemType === 'error' ||
          event.itemType === 'file_change'
        );
      default:
        return true;
    }
  }

  skipped(): void {
    this.state.eventCount += 1;
  }

  private item(raw: unknown): void {
    const item = raw as Record<string, unknown> | undefined;
    if (!item) return;
    if (item.type === 'agent_message' && typeof item.text === 'string') this.state.finalMessage = item.text;
    else if (item.type === 'error' && typeof item.message === 'string') this.notice(item.message);
  }

  private notice(message: string): void {
    this.state.notices.push(message);
    if (this.state.notices.length > MAX_NOTICES) this.state.notices.shift();
  }
}

/** `item.started` item types that name the live status's current step. */
const LIVE_STEP_ITEMS: ReadonlySet<string> = new Set(['command_execution', 'mcp_tool_call', 'web_search']);

/**
 * The command line the model wrote, without the shell codex wraps it in: codex-cli 0.171.0
 * reports `/bin/bash -lc '<cmd>'` (fixture codex-items.jsonl), single quotes escaped as `'\''`.
 * Any other form is returned as is.
 */
export function unwrapShell(command: string): string {
  const match = /^\/(?:usr\/)?bin\/(?:ba|z)?sh -lc '(.*)'$/s.exec(command);
  return match ? match[1]!.replaceAll("'\\''", "'") : command;
}

/** `text` cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** `turn.completed.usage`, the session's totals so far (codex-cli 0.171.0), checked ({@link readTokenFigures}). */
function readUsage(raw: unknown): Omit<UsageJson, 'session'> | InvalidUsage {
  const u = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>) : {};
  const figures = readTokenFigures(u, [
    'input_tokens',
    'cached_input_tokens',
    'output_tokens',
    'reasoning_output_tokens',
  ] as const);
  if (isInvalidUsage(figures)) return figures;
  return {
    inputTokens: figures.input_tokens,
    cachedInputTokens: figures.cached_input_tokens,
    outputTokens: figures.output_tokens,
    reasoningOutputTokens: figures.reasoning_output_tokens,
  };
}
