/**
 * Incremental JSON Lines decoding of a child's stdout (PRODUCT.md §8): chunks may split a line or
 * a multi-byte character anywhere; a single line can be megabytes; memory stays bounded by
 * `maxEventBytes` whatever the child prints.
 */

/** One decoded line: a JSON value, or a framing error. */
export type JsonLine =
  | { kind: 'event'; value: unknown; raw: string }
  | { kind: 'framing_error'; error: 'too_long' | 'not_json'; bytes: number; sample: string };

const NEWLINE = 0x0a;

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
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });

  /** @param maxEventBytes - longest accepted line in bytes, newline excluded; longer is a framing error. */
  constructor(private readonly maxEventBytes: number) {}

  /** Feeds a chunk; returns the lines it completed. */
  push(chunk: Buffer): JsonLine[] {
    const out: JsonLine[] = [];
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      this.take(chunk.subarray(start, end));
      if (newline === -1) break;
      this.finishLine(out);
      start = newline + 1;
    }
    return out;
  }

  /** Flushes a final line that had no trailing newline. */
  end(): JsonLine[] {
    const out: JsonLine[] = [];
    if (this.pendingBytes > 0 || this.discarding) this.finishLine(out);
    return out;
  }

  private take(part: Buffer): void {
    if (part.length === 0) return;
    if (this.discarding) {
      this.discardedBytes += part.length;
      return;
    }
    if (this.pendingBytes + part.length > this.maxEventBytes) {
      this.discarding = true;
      this.discardedBytes = this.pendingBytes + part.length;
      this.pending = [this.pending[0] ?? part.subarray(0, 200)];
      this.pendingBytes = 0;
      return;
    }
    // Copy: the child's chunk buffers may be reused by the stream.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private finishLine(out: JsonLine[]): void {
    if (this.discarding) {
      const sample = this.decoder.decode(this.pending[0]?.subarray(0, 200) ?? Buffer.alloc(0));
      out.push({ kind: 'framing_error', error: 'too_long', bytes: this.discardedBytes, sample });
      this.discarding = false;
      this.discardedBytes = 0;
    } else {
      const raw = this.decoder.decode(Buffer.concat(this.pending, this.pendingBytes)).replace(/\r$/, '');
      if (raw.trim() !== '') out.push(parseLine(raw));
    }
    this.pending = [];
    this.pendingBytes = 0;
  }
}

function parseLine(raw: string): JsonLine {
  try {
    const value: unknown = JSON.parse(raw);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return { kind: 'event', value, raw };
  } catch {
    // fall through: not JSON
  }
  return { kind: 'framing_error', error: 'not_json', bytes: Buffer.byteLength(raw), sample: raw.slice(0, 200) };
}
