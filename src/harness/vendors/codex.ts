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
        // Retries ("Reconnecting... 1/5") and warnings: notices, never fatal by themselves.
        if (typeof e.message === 'string') this.notice(e.message);
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
