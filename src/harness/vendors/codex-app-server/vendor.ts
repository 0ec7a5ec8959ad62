/**
 * The Codex CLI driven through `codex app-server` (JSON-RPC over stdio; upstream marks it
 * experimental). Same binary, home, login and hostile-repository defences as `codex exec`
 * ({@link codexVendor}); what differs is how the task, the posture and the model reach it (the
 * session's requests, not argv) and what it prints (notifications, read by its own reducer).
 */
import { codexAuthFailureLine, codexVendor, truncate, untrustedProjects } from '../codex.js';
import type {
  LaunchContext,
  LaunchRequest,
  ReducerContext,
  SessionIo,
  StreamReducer,
  Vendor,
  VendorSession,
} from '../types.js';
import type { ErrorNotification } from './protocol/v2/ErrorNotification.js';
import type { ThreadItem } from './protocol/v2/ThreadItem.js';
import type { TurnCompletedNotification } from './protocol/v2/TurnCompletedNotification.js';
import { CodexAppServerReducer, turnErrorText } from './reducer.js';
import { CodexAppServerSession } from './session.js';
import { codexAppServerTranscript } from './transcript.js';

/** One parsed line, as far as the describers read it. */
interface Line {
  method?: unknown;
  params?: unknown;
}

/** The app-server codex vendor. */
export const codexAppServerVendor: Vendor = {
  ...codexVendor,

  /**
   * `app-server` on stdio with the working directory and its ancestors untrusted (see
   * {@link codexVendor}: no project config layer loads). The model, the sandbox and the images
   * go in the session's thread/start and turn/start.
   */
  buildArgv(_request: LaunchRequest, context: LaunchContext): string[] {
    return ['app-server', '-c', untrustedProjects(context.cwd)];
  },

  newReducer(context?: ReducerContext): StreamReducer {
    return new CodexAppServerReducer(context?.sessionUsageBefore);
  },

  transcript: codexAppServerTranscript,

  // Its approval requests come over the session (codex-app-server/approvals.ts).
  supportsApprovals: true,

  openSession(io: SessionIo): VendorSession {
    return new CodexAppServerSession(io);
  },

  /** An `error` notification with `willRetry` (codex retrying its model). */
  describeRetry(event: unknown): string | undefined {
    const e = event as Line;
    if (e.method !== 'error') return undefined;
    const p = e.params as ErrorNotification | undefined;
    return p?.willRetry === true ? turnErrorText(p.error) : undefined;
  },

  /**
   * A 401 from the model server. Measured on 0.171.0 against a server answering 401: with
   * retries, `error` notifications "Reconnecting... 1/5" (`willRetry`) whose `additionalDetails`
   * are "unexpected status 401 Unauthorized: …, url: …"; with retries off, one `error` with those
   * words as its `message`; then `turn/completed` with status `failed` and the same words.
   */
  describeAuthFailure(source: { event: unknown } | { stderr: string }): string | undefined {
    if ('stderr' in source) return codexAuthFailureLine(source.stderr);
    const e = source.event as Line;
    const error =
      e.method === 'error'
        ? (e.params as ErrorNotification | undefined)?.error
        : e.method === 'turn/completed'
          ? (e.params as TurnCompletedNotification | undefined)?.turn?.error
          : undefined;
    return codexAuthFailureLine(error?.message) ?? codexAuthFailureLine(error?.additionalDetails);
  },

  describeProgress(event: unknown): string | undefined {
    const e = event as Line;
    const item = (e.params as { item?: ThreadItem } | undefined)?.item;
    if (!item) return undefined;
    if (e.method === 'item/started' && item.type === 'commandExecution') return `running ${truncate(item.command, 80)}`;
    if (e.method !== 'item/completed') return undefined;
    if (item.type === 'fileChange') {
      const paths = item.changes.map((c) => c.path);
      return `changed ${paths.length} file${paths.length === 1 ? '' : 's'} (${truncate(paths.join(', '), 80)})`;
    }
    if (item.type === 'mcpToolCall') return `tool ${item.server}/${item.tool}`;
    if (item.type === 'webSearch') return `searched the web for ${truncate(item.query, 60)}`;
    return undefined;
  },
};
