/**
 * codex app-server's notifications as transcript steps: `item/started` / `item/completed` of
 * `agentMessage`, `reasoning`, `commandExecution` (`aggregatedOutput`, `exitCode`), `mcpToolCall`,
 * `webSearch` and `fileChange` items, a failed `turn/completed`, and `error` notifications.
 * Shapes from the protocol generated from the pinned codex (protocol/v2/ThreadItem.ts).
 */
import { codexTranscript } from '../codex-transcript.js';
import { recordOf, stringOf, type TranscriptStep } from '../transcript.js';

/**
 * The steps of one stored app-server message (a notification, an answer or a request). A line
 * without a `method` is a `codex exec --json` event (a run from before the transport changed,
 * or one with `codex_transport = "exec"`), read as such.
 */
export function codexAppServerTranscript(message: unknown): TranscriptStep[] {
  const m = recordOf(message);
  const method = stringOf(m['method']);
  if (method === undefined) return 'type' in m ? codexTranscript(message) : [];
  const params = recordOf(m['params']);
  if (method === 'error') {
    const text = stringOf(recordOf(params['error'])['message']);
    return text ? [{ kind: 'notice', text }] : [];
  }
  if (method === 'turn/completed') {
    const turn = recordOf(params['turn']);
    if (turn['status'] === 'completed') return [];
    const text = stringOf(recordOf(turn['error'])['message']) ?? `turn ${stringOf(turn['status']) ?? 'ended'}`;
    return [{ kind: 'result', text, failed: true }];
  }
  if (method !== 'item/started' && method !== 'item/completed') return [];
  return itemSteps(recordOf(params['item']), method === 'item/completed');
}

/** The steps of one thread item, started or completed. */
function itemSteps(item: Record<string, unknown>, done: boolean): TranscriptStep[] {
  const id = stringOf(item['id']) ?? '';
  switch (stringOf(item['type'])) {
    case 'agentMessage':
      return done ? [{ kind: 'message', text: stringOf(item['text']) ?? '' }] : [];
    case 'reasoning': {
      const summary = Array.isArray(item['summary']) ? item['summary'].filter((s) => typeof s === 'string') : [];
      return done && summary.length > 0 ? [{ kind: 'reasoning', text: summary.join('\n') }] : [];
    }
    case 'commandExecution': {
      const exit = item['exitCode'];
      const step: TranscriptStep = {
        kind: 'command',
        id,
        command: stringOf(item['command']) ?? '',
        output: stringOf(item['aggregatedOutput']) ?? '',
        failed:
          item['status'] === 'failed' || item['status'] === 'declined' || (typeof exit === 'number' && exit !== 0),
        done,
      };
      if (typeof exit === 'number') step.exitCode = exit;
      return [step];
    }
    case 'mcpToolCall': {
      const error = stringOf(recordOf(item['error'])['message']);
      const result = item['result'];
      return [
        {
          kind: 'tool',
          id,
          name: `${stringOf(item['server']) ?? '?'}/${stringOf(item['tool']) ?? '?'}`,
          input: JSON.stringify(item['arguments'] ?? {}),
          output: error ?? (result === null || result === undefined ? '' : JSON.stringify(result)),
          failed: item['status'] === 'failed',
          done,
        },
      ];
    }
    case 'webSearch':
      return [{ kind: 'tool', id, name: 'web search', input: stringOf(item['query']) ?? '', failed: false, done }];
    case 'fileChange': {
      if (!done) return [];
      const changes = Array.isArray(item['changes']) ? item['changes'].map(recordOf) : [];
      return [
        {
          kind: 'files',
          changes: changes.map((c) => ({
            path: stringOf(c['path']) ?? '?',
            change: stringOf(recordOf(c['kind'])['type']) ?? 'update',
          })),
        },
      ];
    }
    default:
      return [];
  }
}
