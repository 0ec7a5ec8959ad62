/**
 * Codex's `exec --json` events as transcript steps: `item.started` / `item.completed` of
 * `agent_message`, `reasoning`, `command_execution` (`aggregated_output`, `exit_code`),
 * `mcp_tool_call`, `web_search`, `file_change`, `error`, and `turn.failed` / `error` lines.
 * Shapes measured on codex 0.171.0 (/work/shared/fixtures/vendor-streams/codex-items.jsonl).
 */
import { recordOf, stringOf, type TranscriptStep } from './transcript.js';

/** The steps of one codex event. */
export function codexTranscript(event: unknown): TranscriptStep[] {
  const e = recordOf(event);
  const type = stringOf(e['type']);
  if (type === 'error') return [{ kind: 'notice', text: stringOf(e['message']) ?? 'error' }];
  if (type === 'turn.failed') {
    return [{ kind: 'result', text: stringOf(recordOf(e['error'])['message']) ?? 'turn failed', failed: true }];
  }
  if (type !== 'item.started' && type !== 'item.completed' && type !== 'item.updated') return [];
  const item = recordOf(e['item']);
  const id = stringOf(item['id']) ?? '';
  const done = type === 'item.completed';
  switch (stringOf(item['type'])) {
    case 'agent_message':
      return [{ kind: 'message', text: stringOf(item['text']) ?? '' }];
    case 'reasoning':
      return [{ kind: 'reasoning', text: stringOf(item['text']) ?? '' }];
    case 'command_execution': {
      const exit = item['exit_code'];
      const step: TranscriptStep = {
        kind: 'command',
        id,
        command: stringOf(item['command']) ?? '',
        output: stringOf(item['aggregated_output']) ?? '',
        failed: item['status'] === 'failed' || (typeof exit === 'number' && exit !== 0),
        done,
      };
      if (typeof exit === 'number') step.exitCode = exit;
      return [step];
    }
    case 'mcp_tool_call': {
      const error = stringOf(recordOf(item['error'])['message']);
      return [
        {
          kind: 'tool',
          id,
          name: `${stringOf(item['server']) ?? '?'}/${stringOf(item['tool']) ?? '?'}`,
          input: JSON.stringify(item['arguments'] ?? {}),
          output:
            error ?? (item['result'] === null || item['result'] === undefined ? '' : JSON.stringify(item['result'])),
          failed: item['status'] === 'failed',
          done,
        },
      ];
    }
    case 'web_search':
      return [{ kind: 'tool', id, name: 'web search', input: stringOf(item['query']) ?? '', failed: false, done }];
    case 'file_change': {
      if (!done) return [];
      const changes = Array.isArray(item['changes']) ? item['changes'].map(recordOf) : [];
      return [
        {
          kind: 'files',
          changes: changes.map((c) => ({ path: stringOf(c['path']) ?? '?', change: stringOf(c['kind']) ?? 'update' })),
        },
      ];
    }
    case 'error':
      return [{ kind: 'notice', text: stringOf(item['message']) ?? 'error' }];
    default:
      return [];
  }
}
