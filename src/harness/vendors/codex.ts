/**
 * The Codex CLI (`codex exec --json`). Flags and events as measured on codex-cli 0.171.0
 * (shared/spec/VENDOR-CLI.md).
 */
import type { UsageJson } from '../../store/schema.js';
import { shellQuote } from '../shell-quote.js';
import type { LaunchRequest, StreamFacts, StreamReducer, Vendor, VendorHomes } from './types.js';

const MAX_NOTICES = 20;

/** The Codex vendor. */
export const codexVendor: Vendor = {
  name: 'codex',
  binaryName: 'codex',

  buildArgv(request: LaunchRequest): string[] {
    // Exec-level flags must precede `resume` (after it, -s/-C are usage errors, rc 2).
    const argv = ['exec', '--json', '--skip-git-repo-check'];
    if (request.model) argv.push('-m', request.model);
    if (request.resumeSessionId) {
      if (request.posture) argv.push('-c', `sandbox_mode=${JSON.stringify(request.posture)}`);
      argv.push('resume', request.resumeSessionId, '--', request.prompt);
      return argv;
    }
    if (request.posture) argv.push('--sandbox', request.posture);
    // `--` ends options, so a prompt beginning with `-` is never read as a flag.
    argv.push('--', request.prompt);
    return argv;
  },

  vendorEnv(homes: VendorHomes): Record<string, string> {
    return { CODEX_HOME: homes.codexHome };
  },

  newReducer(): StreamReducer {
    return new CodexReducer();
  },

  resumeCommand(cwd: string, sessionId: string): string {
    return `cd ${shellQuote(cwd)} && codex exec resume ${shellQuote(sessionId)} --json`;
  },

  describeProgress(event: unknown): string | undefined {
    const e = event as { type?: unknown; item?: Record<string, unknown> };
    const item = e.item;
    if (!item) return undefined;
    if (e.type === 'item.started' && item.type === 'command_execution' && typeof item.command === 'string') {
      return `running ${truncate(item.command, 80)}`;
    }
    if (e.type !== 'item.completed') return undefined;
    if (item.type === 'file_change' && Array.isArray(item.changes)) {
      const paths = item.changes.map((c) => (c as { path?: unknown }).path).filter((p): p is string => typeof p === 'string');
      return `changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${truncate(paths.join(', '), 80)})`;
    }
    if (item.type === 'mcp_tool_call' && typeof item.tool === 'string') return `tool ${String(item.server ?? '')}/${item.tool}`;
    if (item.type === 'web_search' && typeof item.query === 'string') return `searched the web for ${truncate(item.query, 60)}`;
    return undefined;
  },
};

/** Folds `codex exec --json` events: `thread.started`, `item.*`, `turn.completed|failed`, `error`. */
class CodexReducer implements StreamReducer {
  private readonly state: StreamFacts = { notices: [], eventCount: 0 };

  push(event: unknown): void {
    this.state.eventCount += 1;
    const e = event as Record<string, unknown>;
    switch (e.type) {
      case 'thread.started':
        if (typeof e.thread_id === 'string') this.state.sessionId = e.thread_id;
        break;
      case 'item.completed':
        this.item(e.item);
        break;
      case 'turn.completed':
        this.state.usage = readUsage(e.usage);
        this.state.terminal = { kind: 'completed' };
        break;
      case 'turn.failed': {
        const error = e.error as { message?: unknown } | undefined;
        const message = typeof error?.message === 'string' ? error.message : 'codex reported turn.failed';
        this.state.terminal = { kind: 'failed', message };
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
    return { ...this.state, notices: [...this.state.notices] };
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

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function readUsage(raw: unknown): UsageJson {
  const u = (raw ?? {}) as Record<string, unknown>;
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return {
    inputTokens: num(u.input_tokens),
    cachedInputTokens: num(u.cached_input_tokens),
    outputTokens: num(u.output_tokens),
    reasoningOutputTokens: num(u.reasoning_output_tokens),
  };
}
