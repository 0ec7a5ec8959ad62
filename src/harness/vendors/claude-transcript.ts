/**
 * Claude Code's `stream-json` events as transcript steps: `assistant` content (`text`,
 * `thinking`, `tool_use`), `user` `tool_result` blocks joined to their call by `tool_use_id`,
 * `system/api_retry` notices and the `result`. Claude reports no exit code, only `is_error`.
 * Shapes measured on claude 2.1.332 (/work/shared/fixtures/vendor-streams/claude-tool-use.jsonl).
 */
import { describeRetry } from './claude-events.js';
import { recordOf, stringOf, type TranscriptStep } from './transcript.js';

/** Tools that write a file: their call shows as a file change as well. */
const FILE_TOOLS: Readonly<Record<string, string>> = {
  Write: 'write',
  Edit: 'update',
  MultiEdit: 'update',
  NotebookEdit: 'update',
};

/** The steps of one claude event. */
export function claudeTranscript(event: unknown): TranscriptStep[] {
  const e = recordOf(event);
  switch (stringOf(e['type'])) {
    case 'assistant':
      return contentOf(e).flatMap(assistantBlock);
    case 'user':
      return contentOf(e).flatMap(toolResult);
    case 'system':
      return e['subtype'] === 'api_retry' ? [{ kind: 'notice', text: describeRetry(e) }] : [];
    case 'result': {
      const failed = e['is_error'] === true || (stringOf(e['subtype']) ?? 'success') !== 'success';
      return [{ kind: 'result', text: stringOf(e['result']) ?? stringOf(e['subtype']) ?? '', failed }];
    }
    default:
      return [];
  }
}

function contentOf(e: Record<string, unknown>): Record<string, unknown>[] {
  const content = recordOf(e['message'])['content'];
  return Array.isArray(content) ? content.map(recordOf) : [];
}

function assistantBlock(block: Record<string, unknown>): TranscriptStep[] {
  switch (stringOf(block['type'])) {
    case 'text':
      return [{ kind: 'message', text: stringOf(block['text']) ?? '' }];
    case 'thinking':
      return [{ kind: 'reasoning', text: stringOf(block['thinking']) ?? '' }];
    case 'tool_use': {
      const id = stringOf(block['id']) ?? '';
      const name = stringOf(block['name']) ?? '?';
      const input = recordOf(block['input']);
      const command = stringOf(input['command']);
      const steps: TranscriptStep[] = [
        name === 'Bash' && command !== undefined
          ? { kind: 'command', id, command, failed: false, done: false }
          : { kind: 'tool', id, name, input: JSON.stringify(input), failed: false, done: false },
      ];
      const path = stringOf(input['file_path']) ?? stringOf(input['notebook_path']);
      const change = FILE_TOOLS[name];
      if (change && path) steps.push({ kind: 'files', changes: [{ path, change }] });
      return steps;
    }
    default:
      return [];
  }
}

function toolResult(block: Record<string, unknown>): TranscriptStep[] {
  if (block['type'] !== 'tool_result') return [];
  const content = block['content'];
  const output =
    typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content
            .map(recordOf)
            .map((c) => stringOf(c['text']) ?? '')
            .join('\n')
        : '';
  const id = stringOf(block['tool_use_id']) ?? '';
  const failed = block['is_error'] === true;
  // The kind is the call's: foldTranscript keeps the first step's kind and name.
  return [{ kind: 'tool', id, name: '', input: '', output, failed, done: true }];
}
