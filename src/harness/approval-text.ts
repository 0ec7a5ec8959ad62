/**
 * A tool call as the owner reads it in an approval message: made visible (hidden characters
 * shown), and cut to the room one message has.
 */
import type { ApprovalWords } from './ports.js';
import { revealHidden, type HiddenKind, type RevealedText } from './reveal-text.js';

/**
 * Longest tool input shown in an approval message, in characters, where the platform allows more;
 * the rest is cut with a note and the whole input follows as a file.
 */
export const MAX_APPROVAL_INPUT_CHARS = 3000;

/**
 * The tool call as the owner reads it, whole, with hidden characters made visible (see
 * reveal-text.ts): the command line for Bash; the file path and a diff for edits (`-` old, `+`
 * new lines); the path and the new lines for a write; the JSON input otherwise. Command lines and
 * paths escape every non-ASCII character; file contents only hidden ones and look-alike letters.
 */
export function revealToolCall(tool: string, input: Record<string, unknown>): RevealedText {
  const found = new Set<HiddenKind>();
  const show = (text: string, strict: boolean): string => {
    const revealed = revealHidden(text, strict);
    for (const kind of revealed.found) found.add(kind);
    return revealed.text;
  };
  const str = (key: string): string | undefined => (typeof input[key] === 'string' ? input[key] : undefined);
  const lines = (text: string, mark: string): string =>
    show(text, false)
      .split('\n')
      .map((l) => `${mark} ${l}`)
      .join('\n');
  const diff = (oldText: string, newText: string): string => `${lines(oldText, '-')}\n${lines(newText, '+')}`;
  const path = (key: string): string => show(str(key) ?? '?', true);
  let text: string;
  switch (tool) {
    case 'Bash':
      text = `$ ${show(str('command') ?? '', true)}`;
      break;
    case 'Write':
      text = `${path('file_path')}\n${lines(str('content') ?? '', '+')}`;
      break;
    case 'Edit':
      text = `${path('file_path')}\n${diff(str('old_string') ?? '', str('new_string') ?? '')}`;
      break;
    case 'MultiEdit': {
      const edits = Array.isArray(input['edits']) ? input['edits'] : [];
      text = [
        path('file_path'),
        ...edits.map((e) =>
          typeof e === 'object' && e !== null
            ? diff(
                String((e as Record<string, unknown>)['old_string'] ?? ''),
                String((e as Record<string, unknown>)['new_string'] ?? ''),
              )
            : '',
        ),
      ].join('\n');
      break;
    }
    case 'ApplyPatch': {
      // codex's patch: each file's path and kind, then its unified diff as codex reported it.
      const changes = Array.isArray(input['changes']) ? input['changes'] : [];
      text = changes
        .map((c) => {
          const change = (typeof c === 'object' && c !== null ? c : {}) as Record<string, unknown>;
          const kind =
            typeof change['kind'] === 'object' ? JSON.stringify(change['kind']) : String(change['kind'] ?? '');
          const move = typeof change['movePath'] === 'string' ? ` → ${show(change['movePath'], true)}` : '';
          return `${show(String(change['path'] ?? '?'), true)}${move} (${show(kind, true)})\n${show(String(change['diff'] ?? ''), false)}`;
        })
        .join('\n');
      if (typeof input['grantRoot'] === 'string') text += `\nwrite access under ${show(input['grantRoot'], true)}`;
      break;
    }
    default:
      text = show(JSON.stringify(input, null, 2), false);
  }
  return { text, found };
}

/** {@link revealToolCall}'s text. */
export function toolCallText(tool: string, input: Record<string, unknown>): string {
  return revealToolCall(tool, input).text;
}

/**
 * {@link toolCallText} cut to `maxChars` characters, the note included (the words'
 * `inputCutNote`, saying that the whole input is in `/runs`).
 */
export function describeToolCall(
  tool: string,
  input: Record<string, unknown>,
  words: Pick<ApprovalWords, 'inputCutNote'>,
  maxChars = MAX_APPROVAL_INPUT_CHARS,
): string {
  return cutToolCallText(toolCallText(tool, input), maxChars, (more) => words.inputCutNote(more));
}

/** `text` cut to `maxChars` characters, `note(characters left out)` included. */
export function cutToolCallText(text: string, maxChars: number, note: (cut: number) => string): string {
  if (text.length <= maxChars) return text;
  // The note is counted in the limit, so the message stays within the platform's.
  let keep = Math.max(0, maxChars - note(text.length).length);
  // Never split a surrogate pair.
  if (keep > 0 && /[\ud800-\udbff]/.test(text[keep - 1]!)) keep -= 1;
  return `${text.slice(0, keep)}${note(text.length - keep)}`;
}
