/**
 * Incremental JSON Lines decoding of a child's stdout: chunks may split a line or
 * a multi-byte character anywhere; a single line can be megabytes; memory stays bounded by
 * `maxEventBytes` whatever the child prints.
 *
 * Lines the reader does not need are not parsed: their `type` is sniffed from the raw
 * bytes ({@link sniffEvent}) and, when the `reads` predicate says no, the line is handed on as
 * bytes only. A sniff that cannot be sure falls back to a full parse.
 */

/** What a line's first bytes say about its event, without a parse (see {@link sniffEvent}). */
export interface SniffedEvent {
  /** The top-level `type`, e.g. `item.completed` (codex) or `user` (claude). */
  type: string;
  /** codex only: the `type` of the line's `item`, e.g. `reasoning`, when the sniff could read it. */
  itemType?: string;
}

/**
 * One decoded line: a parsed JSON object; an object line spooled unparsed because the reader does
 * not need its type; or a framing error. `bytes` is the line exactly as the child printed it,
 * with its newline (a final line without one gets it added), for the spool: never re-encoded.
 */
export type JsonLine =
  | { kind: 'event'; value: unknown; raw: string; bytes: Buffer }
  | { kind: 'skipped'; event: SniffedEvent; bytes: Buffer }
  | { kind: 'framing_error'; error: 'too_long' | 'not_json'; bytes: number; sample: string; spillPath?: string };

import type { LineSpill } from './line-spill.js';

const NEWLINE = 0x0a;
const CLOSE_BRACE = 0x7d;
/** Bytes of a line's start the sniff looks at (latin1-decoded: the names it accepts are ASCII). */
const SNIFF_PREFIX_BYTES = 256;
/**
 * `{"type":"NAME"` at the very start of the line, optionally followed by codex's
 * `,"item":{"id":"ID","type":"NAME"`. Names are plain ASCII (no escapes, no quotes), so the
 * latin1 reading of the bytes is the JSON value.
 */
const SNIFF =
  /^\{"type":"([A-Za-z0-9_.:/-]{1,64})"(?:,"item":\{"id":"[A-Za-z0-9_.:-]{0,128}","type":"([A-Za-z0-9_.:/-]{1,64})")?/;
const TYPE_KEY = Buffer.from('"type":');

/**
 * Reads an event's `type` (and codex's `item.type`) from a line's raw bytes, or returns undefined
 * when it cannot be sure, so the caller parses the line in full. Sure means all of:
 * - the line starts with `{"type":"NAME"` (the regex above), and ends with `}` (trailing
 *   whitespace aside);
 * - the bytes `"type":` occur exactly as often as the sniff read them (once, or twice with an
 *   item). In JSON text a `"` inside a string is escaped, so `"type":` occurs only where a key
 *   ends in `type`: with no other occurrence there is no second, later `type` key anywhere that
 *   `JSON.parse` would let win (codex does print duplicate keys, e.g. two `id`s in `web_search`).
 *
 * A line that passes is not validated as JSON: it is spooled as printed and counted as an event.
 *
 * @param line - one line's bytes, without its newline.
 */
export function sniffEvent(line: Buffer): SniffedEvent | undefined {
  let last = line.length - 1;
  while (last >= 0 && (line[last] === 0x20 || line[last] === 0x0d || line[last] === 0x09)) last -= 1;
  if (last < 0 || line[last] !== CLOSE_BRACE) return undefined;
  const match = SNIFF.exec(line.toString('latin1', 0, Math.min(line.length, SNIFF_PREFIX_BYTES)));
  if (!match) return undefined;
  const expected = match[2] === undefined ? 1 : 2;
  let seen = 0;
  for (let at = line.indexOf(TYPE_KEY); at !== -1; at = line.indexOf(TYPE_KEY, at + TYPE_KEY.length)) {
    seen += 1;
    if (seen > expected) return undefined;
  }
  if (seen !== expected) return undefined;
  return match[2] === undefined ? { type: match[1]! } : { type: match[1]!, itemType: match[2] };
}

/**
 * Splits a byte stream into JSON lines. UTF-8 safe because `\n` (0x0A) never occurs inside a
 * multi-byte UTF-8 sequence, so lines are cut on bytes and decoded whole.
 */
export class JsonLineDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** True while skipping the rest of a line that already exceeded the limit. */
  private discarding = false;
  private discardedBytes = 0;
  /** True while the current over-long line goes to {@link spill} instead of memory. */
  private spilling = false;

  /**
   * @param maxEventBytes - longest line in bytes (newline excluded) held in memory; a longer one
   *   goes to `spill` when given (and is parsed if it ends within the spill's cap), else it is a
   *   framing error.
   * @param reads - whether the reader needs an event of this kind parsed; a line whose sniffed
   *   kind it declines comes out as `skipped`. Absent: every line is parsed.
   * @param spill - where over-long lines are written as they arrive. Absent: they are dropped.
   */
  constructor(
    private readonly maxEventBytes: number,
    private readonly reads?: (event: SniffedEvent) => boolean,
    private readonly spill?: LineSpill,
  ) {}

  /** Feeds a chunk; returns the lines it completed. */
  push(chunk: Buffer): JsonLine[] {
    const out: JsonLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      if (newline === -1) {
        this.take(chunk.subarray(start));
        break;
      }
      if (this.pendingBytes === 0 && !this.discarding && !this.spilling) {
        // The whole line is in this chunk: no copy. Node gives each 'data' event its own buffer.
        if (newline - start > this.maxEventBytes) {
          this.take(chunk.subarray(start, newline));
          this.finishLine(out);
        } else this.line(chunk.subarray(start, newline), chunk.subarray(start, newline + 1), out);
      } else {
        this.take(chunk.subarray(start, newline));
        this.finishLine(out);
      }
      start = newline + 1;
    }
    return out;
  }

  /** Flushes a final line that had no trailing newline. */
  end(): JsonLine[] {
    const out: JsonLine[] = [];
    if (this.pendingBytes > 0 || this.discarding || this.spilling) this.finishLine(out);
    return out;
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.discarding || this.spilling) {
      this.discardedBytes += part.length;
      if (this.spilling) this.spill!.write(part);
      return;
    }
    if (this.pendingBytes + part.length > this.maxEventBytes) {
      if (this.spill && this.wantsLong(part)) {
        // Too long for memory: what is held so far and the rest go to disk as they come.
        this.spilling = true;
        this.discardedBytes = this.pendingBytes + part.length;
        this.spill.begin();
        for (const held of this.pending) this.spill.write(held);
        this.spill.write(part);
        this.pending = [this.head(part)];
        this.pendingBytes = 0;
        return;
      }
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + part.length;
      this.pending = [this.pending[0] ?? Buffer.from(part.subarray(0, 200))];
      this.pendingBytes = 0;
      return;
    }
    // Copy: a part kept across chunks must not pin the chunk it came from.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  /** The first {@link SNIFF_PREFIX_BYTES} of the current line, `part` being its latest part. */
  private head(part: Buffer): Buffer {
    return Buffer.concat([...this.pending, part.subarray(0, SNIFF_PREFIX_BYTES)]).subarray(0, SNIFF_PREFIX_BYTES);
  }

  /**
   * Whether an over-long line is worth its disk and a parse: not when its start names a kind the
   * reader declines (command output, tool results), which stay cheap drops. The start alone
   * cannot rule out a later duplicate `type` key as {@link sniffEvent} does; a child that prints
   * one only loses its own event.
   */
  private wantsLong(part: Buffer): boolean {
    if (!this.reads) return true;
    const match = SNIFF.exec(this.head(part).toString('latin1'));
    if (!match) return true;
    return this.reads(match[2] === undefined ? { type: match[1]! } : { type: match[1]!, itemType: match[2] });
  }

  private finishLine(out: JsonLine[]): void {
    if (this.spilling) {
      const end = this.spill!.finish();
      if (end.kind === 'line') this.line(end.content, end.withNewline, out);
      else
        out.push(
          tooLong(
            this.pending[0] ?? Buffer.alloc(0),
            this.discardedBytes,
            end.kind === 'over_cap' ? end.path : undefined,
          ),
        );
      this.spilling = false;
      this.discardedBytes = 0;
    } else if (this.discarding) {
      out.push(tooLong(this.pending[0]?.subarray(0, 200) ?? Buffer.alloc(0), this.discardedBytes));
      this.discarding = false;
      this.discardedBytes = 0;
    } else {
      // One buffer with room for the newline: the line as printed, ready for the spool.
      const whole = Buffer.allocUnsafe(this.pendingBytes + 1);
      let at = 0;
      for (const part of this.pending) at += part.copy(whole, at);
      whole[at] = NEWLINE;
      this.line(whole.subarray(0, at), whole, out);
    }
    this.pending = [];
    this.pendingBytes = 0;
  }

  /** Classifies one complete line (`content` without, `withNewline` with its newline). */
  private line(content: Buffer, withNewline: Buffer, out: JsonLine[]): void {
    if (this.reads) {
      const sniffed = sniffEvent(content);
      if (sniffed && !this.reads(sniffed)) {
        out.push({ kind: 'skipped', event: sniffed, bytes: withNewline });
        return;
      }
    }
    let end = content.length;
    if (end > 0 && content[end - 1] === 0x0d) end -= 1;
    const raw = content.toString('utf8', 0, end);
    if (raw.trim() === '') return;
    out.push(parseLine(raw, withNewline));
  }
}

function tooLong(head: Buffer, bytes: number, spillPath?: string): JsonLine {
  const sample = head.toString('utf8', 0, Math.min(head.length, 200));
  return spillPath === undefined
    ? { kind: 'framing_error', error: 'too_long', bytes, sample }
    : { kind: 'framing_error', error: 'too_long', bytes, sample, spillPath };
}

function parseLine(raw: string, bytes: Buffer): JsonLine {
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      return { kind: 'event', value, raw, bytes };
  } catch {
    // fall through: not JSON
  }
  return { kind: 'framing_error', error: 'not_json', bytes: Buffer.byteLength(raw), sample: raw.slice(0, 200) };
}
