/**
 * Splits long text into platform-sized parts (PRODUCT.md §3): on line boundaries where possible,
 * never inside a surrogate pair, nothing dropped, and every part within the limit including the
 * continuation header that repeats the `[run …]` tag.
 */
import { findRunIdTag } from '../core/ids.js';

/**
 * Splits `text` into parts of at most `maxLength` UTF-16 code units each.
 *
 * Parts after the first start with a header `[run hr_…] (k/n)` (or `(k/n)` when the text has no
 * run tag) so the reader can tell which run they belong to and in what order.
 *
 * @param maxLength - the platform's limit in UTF-16 code units (Telegram 4096, Discord 2000).
 * @throws RangeError when `maxLength` is too small to hold a header and any text (< 64).
 */
export function splitMessage(text: string, maxLength: number): string[] {
  if (maxLength < 64) throw new RangeError(`maxLength must be at least 64, got ${maxLength}`);
  if (text.length <= maxLength) return [text];
  const tag = findRunIdTag(text);
  // Reserve room for the longest header this split can need; recompute if the count grows a digit.
  for (let digits = 1; ; digits++) {
    const headerLength = header(tag, 10 ** digits - 1, 10 ** digits - 1).length;
    const chunks = chunkByLines(text, maxLength, maxLength - headerLength);
    if (String(chunks.length).length <= digits) {
      return chunks.map((chunk, index) => (index === 0 ? chunk : header(tag, index + 1, chunks.length) + chunk));
    }
  }
}

/**
 * Re-splits the parts of a message from index `from` on into parts of at most `maxLength`, after
 * the platform refused part `from` (e.g. Telegram counts a part longer than we do). Parts before
 * `from` are kept as they are (they were sent); the new parts continue their numbering, and the
 * total in every new header is the message's final count, so the reader sees 1/n … n/n with no
 * number repeated.
 *
 * @param parts - the parts as laid out so far (from {@link splitMessage} or an earlier re-split).
 * @throws RangeError when `maxLength` is below 64.
 */
export function resplitFrom(parts: readonly string[], from: number, maxLength: number): string[] {
  if (maxLength < 64) throw new RangeError(`maxLength must be at least 64, got ${maxLength}`);
  const kept = parts.slice(0, from);
  // Headers are a line of their own; the rest of each part is the message text itself.
  const rest = parts
    .slice(from)
    .map((part, k) => (from + k === 0 ? part : part.slice(part.indexOf('\n') + 1)))
    .join('');
  const tag = findRunIdTag(parts[0] ?? rest);
  for (let digits = 1; ; digits++) {
    const headerLength = header(tag, 10 ** digits - 1, 10 ** digits - 1).length;
    const chunks = chunkByLines(rest, from === 0 ? maxLength : maxLength - headerLength, maxLength - headerLength);
    const total = from + chunks.length;
    if (String(total).length <= digits) {
      return [...kept, ...chunks.map((chunk, k) => (from + k === 0 ? chunk : header(tag, from + k + 1, total) + chunk))];
    }
  }
}

function header(tag: string | undefined, part: number, total: number): string {
  return tag ? `[run ${tag}] (${part}/${total})\n` : `(${part}/${total})\n`;
}

/** Greedy line packing: the first chunk may use `firstMax`, the rest `restMax`. */
function chunkByLines(text: string, firstMax: number, restMax: number): string[] {
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const max = chunks.length === 0 ? firstMax : restMax;
    if (rest.length <= max) {
      chunks.push(rest);
      break;
    }
    // Keep the newline with the line it ends, so the parts concatenate back to the text exactly.
    // A newline early in the window would leave a tiny part: cut hard instead.
    let cut = rest.lastIndexOf('\n', max - 1) + 1;
    if (cut <= max / 2) {
      cut = max;
      // Never separate a high surrogate from its low surrogate.
      if (isHighSurrogate(rest.charCodeAt(cut - 1))) cut -= 1;
    }
    chunks.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  return chunks;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
