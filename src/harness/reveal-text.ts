/**
 * Text shown for approval as it will run: characters a chat client draws differently from what a
 * shell or a file gets (controls, zero-width and bidirectional marks, unusual spaces, letters that
 * look like ASCII ones) are replaced by a visible `\u{XXXX}`, and the kinds found are named so the
 * card can warn. Unicode's security mechanisms (UTS #39) call such text "mixed script" and
 * "invisible"; this follows their categories without a confusables table.
 */

/** A kind of character made visible. */
export type HiddenKind = 'control' | 'invisible' | 'bidirectional' | 'look-alike';

/** Text with its hidden characters escaped, and which kinds were found. */
export interface RevealedText {
  text: string;
  found: ReadonlySet<HiddenKind>;
}

const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
// Format characters (zero-width joiners, soft hyphen, tag characters…), separators other than
// the plain space, variation selectors, fillers that render as nothing, unassigned and private use.
const INVISIBLE =
  /[\p{Cf}\p{Zl}\p{Zp}\p{Co}\p{Cn}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
// C0 and C1 controls and DEL; newline and tab are kept, they show as themselves.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;

const LATIN = /\p{Script=Latin}/u;
const OTHER_SCRIPT = /[^\P{L}\p{Script=Latin}]/u;

function escape(char: string): string {
  return `\\u{${char.codePointAt(0)!.toString(16).toUpperCase()}}`;
}

function kindOf(char: string): HiddenKind | undefined {
  if (CONTROL.test(char)) return 'control';
  if (BIDI.test(char)) return 'bidirectional';
  if (INVISIBLE.test(char)) return 'invisible';
  return undefined;
}

/**
 * Escapes the hidden characters of `text`.
 *
 * @param strict every non-ASCII character is escaped (a command line, a file path: there a
 *   look-alike letter names another program or file); otherwise only controls, invisible and
 *   bidirectional characters, and the non-ASCII letters and marks of a word that mixes them
 *   with ASCII letters (`сurl` with a Cyrillic `с`), so prose in any one script reads as written.
 */
export function revealHidden(text: string, strict: boolean): RevealedText {
  const found = new Set<HiddenKind>();
  const out: string[] = [];
  // A word: letters, marks and digits; a mixed one holds Latin letters and letters of another script.
  for (const word of text.match(/[\p{L}\p{M}\p{N}]+|[^\p{L}\p{M}\p{N}]+/gu) ?? []) {
    const mixed = !strict && LATIN.test(word) && OTHER_SCRIPT.test(word);
    for (const char of word) {
      const kind = kindOf(char);
      if (kind) {
        found.add(kind);
        out.push(escape(char));
      } else if (strict ? char.codePointAt(0)! > 0x7f : mixed && OTHER_SCRIPT.test(char)) {
        found.add('look-alike');
        out.push(escape(char));
      } else {
        out.push(char);
      }
    }
  }
  return { text: out.join(''), found };
}

/** The warning line for the kinds found, or undefined when none were. */
export function hiddenWarning(found: ReadonlySet<HiddenKind>): string | undefined {
  if (found.size === 0) return undefined;
  const names: Record<HiddenKind, string> = {
    control: 'control characters',
    invisible: 'hidden (zero-width or unusual space) characters',
    bidirectional: 'bidirectional marks that reorder the text',
    'look-alike': 'non-ASCII or look-alike letters',
  };
  const order: HiddenKind[] = ['control', 'invisible', 'bidirectional', 'look-alike'];
  return `⚠ This call holds ${order
    .filter((k) => found.has(k))
    .map((k) => names[k])
    .join(', ')}; they are shown as \\u{…}. What runs is what is shown.`;
}
