/**
 * Where a JSON line longer than `max_event_bytes` goes while it is read: a file in the run's
 * directory, written as the bytes arrive, so memory holds no more of it than one chunk. A line
 * that ends within the cap is read back once for a parse (an answer is often that long); one past
 * the cap is cut at it and its file kept, so the outcome can say where the raw bytes are.
 *
 * Synchronous file calls on purpose: the decoder is synchronous, and a write per stdout chunk
 * (at most 64 KiB) keeps the child's pipe the only buffer.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** How a spilled line ended. */
export type SpillEnd =
  | { kind: 'line'; content: Buffer; withNewline: Buffer }
  | { kind: 'over_cap'; path: string }
  | { kind: 'failed' };

/** Spills over-long lines of one stream to `oversized-line-N.jsonl` files in a directory. */
export class LineSpill {
  private fd: number | undefined;
  private path = '';
  private bytes = 0;
  private overCap = false;
  private failed = false;
  private count = 0;

  /**
   * @param dir - the run's directory (private to the owner).
   * @param capBytes - most bytes of one line spilled; past it the line is dropped.
   */
  constructor(
    private readonly dir: string,
    readonly capBytes: number,
  ) {}

  /** Starts a new line's file. A file that cannot be opened makes the line a plain drop. */
  begin(): void {
    this.count += 1;
    this.path = join(this.dir, `oversized-line-${this.count}.jsonl`);
    this.bytes = 0;
    this.overCap = false;
    this.failed = false;
    try {
      this.fd = openSync(this.path, 'w', 0o600);
    } catch {
      this.fd = undefined;
      this.failed = true;
    }
  }

  /** Appends a part of the current line, up to the cap. */
  write(part: Buffer): void {
    if (this.fd === undefined || this.overCap || part.length === 0) return;
    const room = this.capBytes - this.bytes;
    const take = Math.min(room, part.length);
    try {
      if (take > 0) writeSync(this.fd, part, 0, take);
    } catch {
      this.fail();
      return;
    }
    this.bytes += take;
    if (part.length > room) this.overCap = true;
  }

  /** Ends the current line: its bytes for a parse, or where the cut file stays. */
  finish(): SpillEnd {
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined || this.failed) return { kind: 'failed' };
    if (this.overCap) {
      try {
        closeSync(fd);
      } catch {
        this.fail();
        return { kind: 'failed' };
      }
      return { kind: 'over_cap', path: this.path };
    }
    // fail() closes this.fd: hand it the descriptor back, so a failed write (a full disk) leaks none.
    this.fd = fd;
    try {
      writeSync(fd, Buffer.from('\n'));
      this.fd = undefined;
      closeSync(fd);
      const withNewline = readFileSync(this.path);
      unlinkSync(this.path);
      return { kind: 'line', content: withNewline.subarray(0, withNewline.length - 1), withNewline };
    } catch {
      this.fail();
      return { kind: 'failed' };
    }
  }

  private fail(): void {
    this.failed = true;
    if (this.fd !== undefined) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed or gone: nothing more to release
      }
    }
    this.fd = undefined;
  }
}
