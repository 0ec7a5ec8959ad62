/**
 * Splits long text into platform-sized parts: on line boundaries where possible,
 * never inside a surrogate pair or a Markdown escape, nothing dropped, and every part within the
 * limit including the continuation header that repeats the `[run …]` tag. A fenced code block
 * cut by a split is closed at the end of its part and opened again (same fence and language) at
 * the start of the next, so each part renders on its own.
 */
import { findRunIdTag } from '../core/ids.js';
import { runTag } from '../wording/run-tag.js';

/** One part as laid out: the slice of the text it carries, and the part as sent. */
interface Chunk {
  /** The text's own characters in this part (no header, no fence added by the split). */
  raw: string;
  /** The part as sent: header, reopened fence, `raw`, closing fence. */
  text: string;
}

/** A part re-laid out after the platform refused it: from part `fromPart` on, parts of at most `maxLength`. */
export interface Reshape {
  fromPart: number;
  maxLength: number;
}

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
  return splitWithReshapes(text, maxLength, []);
}

/**
 * {@link splitMessage}, then each re-split in order: after the platform refused part `fromPart`
 * (e.g. Telegram counts a part longer than we do), the parts before it are kept as they were
 * sent and the rest of the text is laid out again in parts of at most the reshape's `maxLength`.
 * The new parts continue the numbering, and the total in every new header is the message's final
 * count, so the reader sees 1/n … n/n with no number repeated.
 *
 * @throws RangeError when a `maxLength` is below 64.
 */
export function splitWithReshapes(text: string, maxLength: number, reshapes: readonly Reshape[]): string[] {
  const tag = findRunIdTag(text);
  let chunks = layoutFrom(text, [], maxLength, tag);
  for (const reshape of reshapes) chunks = layoutFrom(text, chunks.slice(0, reshape.fromPart), reshape.maxLength, tag);
  return chunks.map((chunk) => chunk.text);
}

/**
 * Re-splits the parts of a message from index `from` on; see {@link splitWithReshapes}, which
 * this calls with the text the parts carry.
 *
 * @param parts - the parts as laid out by {@link splitMessage} of a text without fenced code.
 * @throws RangeError when `maxLength` is below 64.
 */
export function resplitFrom(parts: readonly string[], from: number, maxLength: number): string[] {
  const text = parts.map((part, k) => (k === 0 ? part : part.slice(part.indexOf('\n') + 1))).join('');
  const tag = findRunIdTag(text);
  const kept = parts
    .slice(0, from)
    .map((part, k) => ({ text: part, raw: k === 0 ? part : part.slice(part.indexOf('\n') + 1) }));
  return layoutFrom(text, kept, maxLength, tag).map((chunk) => chunk.text);
}

/** Keeps `kept`, then lays out the rest of `text` in parts of at most `maxLength`. */
function layoutFrom(text: string, kept: readonly Chunk[], maxLength: number, tag: string | undefined): Chunk[] {
  if (maxLength < 64) throw new RangeError(`maxLength must be at least 64, got ${maxLength}`);
  const offset = kept.reduce((sum, chunk) => sum + chunk.raw.length, 0);
  const rest = text.slice(offset);
  const fence = fenceAfter(text.slice(0, offset), undefined);
  // Reserve room for the longest header this split can need; recompute if the count grows a digit.
  for (let digits = 1; ; digits++) {
    const headerLength = header(tag, 10 ** digits - 1, 10 ** digits - 1).length;
    const pieces = chunkByLines(
      rest,
      fence,
      kept.length === 0 ? maxLength : maxLength - headerLength,
      maxLength - headerLength,
    );
    const total = kept.length + pieces.length;
    if (String(total).length <= digits) {
      return [
        ...kept,
        ...pieces.map((piece, k) => {
          const index = kept.length + k;
          return {
            raw: piece.raw,
            text: (index === 0 ? '' : header(tag, index + 1, total)) + piece.open + piece.raw + piece.close,
          };
        }),
      ];
    }
  }
}

function header(tag: string | undefined, part: number, total: number): string {
  return tag ? `${runTag(tag)} (${part}/${total})\n` : `(${part}/${total})\n`;
}

/** An open fenced code block: its fence (``` or ~~~, maybe longer) and language word. */
interface Fence {
  marker: string;
  info: string;
}

/** Longest language word carried to a reopened fence. */
const MAX_FENCE_INFO = 20;
/** Longest fence marker the split makes room for when closing one. */
const MAX_FENCE_MARKER = 10;

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`\n]*$/;
const FENCE_CLOSE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;

/** The fenced code block still open after `text`, starting in state `open` (CommonMark fences). */
function fenceAfter(text: string, open: Fence | undefined): Fence | undefined {
  let fence = open;
  for (const line of text.split('\n')) {
    if (fence) {
      const close = FENCE_CLOSE.exec(line);
      if (close && close[1]![0] === fence.marker[0] && close[1]!.length >= fence.marker.length) fence = undefined;
    } else {
      const start = FENCE_OPEN.exec(line);
      if (start) fence = { marker: start[1]!, info: start[2]!.slice(0, MAX_FENCE_INFO) };
    }
  }
  return fence;
}

/**
 * Greedy line packing: the first chunk may use `firstMax`, the rest `restMax`, each including the
 * fence it reopens and the one it closes.
 */
function chunkByLines(
  text: string,
  startFence: Fence | undefined,
  firstMax: number,
  restMax: number,
): { raw: string; open: string; close: string }[] {
  const chunks: { raw: string; open: string; close: string }[] = [];
  let rest = text;
  let fence = startFence;
  while (rest.length > 0) {
    const open = fence ? `${fence.marker}${fence.info}\n` : '';
    const max = (chunks.length === 0 ? firstMax : restMax) - open.length;
    if (rest.length <= max) {
      chunks.push({ raw: rest, open, close: '' });
      break;
    }
    let cut = cutAt(rest, max);
    // A cut inside a code block needs room for the fence that closes it.
    if (fenceAfter(rest.slice(0, cut), fence)) cut = cutAt(rest, max - (MAX_FENCE_MARKER + 1));
    const raw = rest.slice(0, cut);
    fence = fenceAfter(raw, fence);
    const close = fence ? `${raw.endsWith('\n') ? '' : '\n'}${fence.marker.slice(0, MAX_FENCE_MARKER)}` : '';
    chunks.push({ raw, open, close });
    rest = rest.slice(cut);
  }
  return chunks;
}

/**
 * Where to cut `text` to keep at most `max` units: after the last newline in the window, keeping
 * the newline with its line so the parts concatenate back to the text exactly. A newline early in
 * the window would leave a tiny part: cut at the last space then, or hard — never between a high
 * and a low surrogate, nor after a Markdown backslash that escapes the next character.
 */
function cutAt(text: string, max: number): number {
  const newline = text.lastIndexOf('\n', max - 1) + 1;
  if (newline > max / 2) return newline;
  const space = text.lastIndexOf(' ', max - 1) + 1;
  let cut = space > max / 2 ? space : max;
  if (isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
  if (text[cut - 1] === '\\') cut -= 1;
  return cut;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
