/**
 * One run's stdout: JSON lines decoded incrementally, every raw line spooled to
 * `events.jsonl` up to a cap, vendor events folded by the vendor's reducer. Memory stays bounded
 * whatever the child prints; violations are reported through callbacks, never thrown.
 */
import type { WriteStream } from 'node:fs';
import { JsonLineDecoder, type JsonLine, type SniffedEvent } from './json-lines.js';
import { LineSpill } from './line-spill.js';
import type { StreamReducer } from './vendors/types.js';

/** Bounds of one run's output. */
export interface StreamBounds {
  /** Longest event line held in memory, in bytes; a longer one is spilled to {@link spill}. */
  maxEventBytes: number;
  /**
   * Where a line over `maxEventBytes` is written as it arrives (the run's directory) and the most
   * bytes of one such line (`capBytes`): one that ends within it is parsed like any other, one
   * past it is a framing error whose cut file stays. Absent: over-long lines are dropped.
   */
  spill?: { dir: string; capBytes: number };
  /** Malformed lines tolerated; one more is a protocol violation. */
  maxFramingErrors: number;
  /** Most bytes spooled to `events.jsonl`; past it spooling stops and the run continues. */
  maxSpoolBytes: number;
  /** Most stdout bytes in all; past it the run is an output-limit violation. */
  maxOutputBytes: number;
}

/** What the stream tells its owner as it happens. */
export interface StreamCallbacks {
  /**
   * A vendor event arrived (for the watchdog and progress). `event` is undefined for a line
   * spooled without a parse because neither the reducer nor {@link StreamCallbacks.reads} needs
   * its kind.
   */
  onEvent(event: unknown): void;
  /**
   * Whether the owner needs events of this kind parsed too (e.g. for progress milestones).
   * Absent: only what the reducer reads is parsed.
   */
  reads?(event: SniffedEvent): boolean;
  /** The vendor revealed its session id (called once). */
  onSession(sessionId: string): void;
  /** The spool cap was reached (called once). */
  onTruncated(): void;
  /** A line past the spill cap was dropped; its first `capBytes` stay at `path`. */
  onDroppedLine?(drop: { path: string; bytes: number }): void;
  /** Too many framing errors, or too much output (called once each at most). */
  onViolation(reason: 'protocol' | 'output_limit'): void;
}

/** Feeds a child's stdout chunks through decoding, spooling and reduction. */
export class RunStream {
  private readonly decoder: JsonLineDecoder;
  private framingErrors = 0;
  private outputBytes = 0;
  private spooledBytes = 0;
  private truncated = false;
  private sessionSeen = false;
  private violated = false;

  constructor(
    private readonly bounds: StreamBounds,
    private readonly reducer: StreamReducer,
    private spool: WriteStream | undefined,
    private readonly callbacks: StreamCallbacks,
  ) {
    // A line is parsed when the reducer or the owner reads its kind; the rest is spooled as bytes.
    const reducerReads = reducer.reads?.bind(reducer);
    const ownerReads = callbacks.reads?.bind(callbacks);
    this.decoder = new JsonLineDecoder(
      bounds.maxEventBytes,
      reducerReads ? (event) => reducerReads(event) || (ownerReads?.(event) ?? false) : undefined,
      bounds.spill ? new LineSpill(bounds.spill.dir, bounds.spill.capBytes) : undefined,
    );
  }

  /** Stops spooling for good (the spool file failed); the run goes on. */
  detachSpool(): void {
    this.spool = undefined;
  }

  /** Whether spooling stopped at the cap. */
  get artifactTruncated(): boolean {
    return this.truncated;
  }

  /**
   * Feeds one stdout chunk. Keeps draining after a violation: codex panics if its stdout closes.
   *
   * @returns false when the spool file is backed up: pause the child's stdout until the spool
   *   emits 'drain', so a fast child cannot grow memory faster than the disk takes it.
   */
  push(chunk: Buffer): boolean {
    this.outputBytes += chunk.length;
    if (this.outputBytes > this.bounds.maxOutputBytes) this.violate('output_limit');
    this.handle(this.decoder.push(chunk));
    return !(this.spool?.writableNeedDrain ?? false);
  }

  /** Flushes a last line without a newline; call at EOF. */
  end(): void {
    this.handle(this.decoder.end());
  }

  private handle(lines: JsonLine[]): void {
    for (const line of lines) {
      if (line.kind === 'framing_error') {
        this.framingErrors += 1;
        if (line.spillPath !== undefined) this.callbacks.onDroppedLine?.({ path: line.spillPath, bytes: line.bytes });
        if (this.framingErrors > this.bounds.maxFramingErrors) this.violate('protocol');
        continue;
      }
      this.spoolLine(line.bytes);
      if (line.kind === 'skipped') {
        this.reducer.skipped?.(line.event);
        this.callbacks.onEvent(undefined);
        continue;
      }
      this.reducer.push(line.value);
      this.callbacks.onEvent(line.value);
      if (!this.sessionSeen) {
        const sessionId = this.reducer.facts().sessionId;
        if (sessionId) {
          this.sessionSeen = true;
          this.callbacks.onSession(sessionId);
        }
      }
    }
  }

  /** Spools a line's bytes as the child printed them (newline included), never re-encoded. */
  private spoolLine(bytes: Buffer): void {
    if (this.truncated || !this.spool) return;
    if (this.spooledBytes + bytes.length > this.bounds.maxSpoolBytes) {
      this.truncated = true;
      this.callbacks.onTruncated();
      return;
    }
    this.spooledBytes += bytes.length;
    this.spool.write(bytes);
  }

  private violate(reason: 'protocol' | 'output_limit'): void {
    if (this.violated) return;
    this.violated = true;
    this.callbacks.onViolation(reason);
  }
}
