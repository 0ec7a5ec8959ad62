/**
 * Over-long lines through JsonLineDecoder with a LineSpill: whatever the chunking, a line that
 * ends within the spill cap comes out parsed and byte-exact, a line past it is a framing error
 * naming its cut file, and lines around both are unaffected.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JsonLineDecoder, type JsonLine } from '../../src/harness/json-lines.js';
import { LineSpill } from '../../src/harness/line-spill.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'baton-spill-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const MAX_EVENT_BYTES = 1024;
const CAP_BYTES = 16 * 1024;

function decode(text: string, chunkBytes: number): JsonLine[] {
  const decoder = new JsonLineDecoder(MAX_EVENT_BYTES, undefined, new LineSpill(dir, CAP_BYTES));
  const bytes = Buffer.from(text);
  const out: JsonLine[] = [];
  for (let at = 0; at < bytes.length; at += chunkBytes) out.push(...decoder.push(bytes.subarray(at, at + chunkBytes)));
  out.push(...decoder.end());
  return out;
}

const answer = (chars: number): string =>
  JSON.stringify({
    type: 'item.completed',
    item: { id: 'i', type: 'agent_message', text: `${'é…'.repeat(chars / 2)}END` },
  });
const small = JSON.stringify({ type: 'turn.completed', usage: {} });

describe('JsonLineDecoder with a spill', () => {
  it.each([7, 1000, 1024, 1025, 65_536, 1_000_000])(
    'parses a line of 6x max_event_bytes in %i-byte chunks, exactly as printed',
    (chunkBytes) => {
      const big = answer(2000);
      const out = decode(`${small}\n${big}\n${small}`, chunkBytes);
      expect(out.map((l) => l.kind)).toEqual(['event', 'event', 'event']);
      const line = out[1] as Extract<JsonLine, { kind: 'event' }>;
      expect(line.raw).toBe(big);
      expect(line.bytes.equals(Buffer.from(`${big}\n`))).toBe(true);
      expect(readdirSync(dir)).toEqual([]);
    },
  );

  it('parses an over-long last line without a newline', () => {
    const out = decode(answer(3000), 4096);
    expect(out).toMatchObject([{ kind: 'event' }]);
  });

  it.each([100, 65_536])(
    'drops a line past the cap, keeping its first cap bytes (%i-byte chunks), and reads on',
    (chunkBytes) => {
      const huge = answer(20_000);
      const out = decode(`${huge}\n${small}\n${answer(2000)}\n`, chunkBytes);
      expect(out.map((l) => l.kind)).toEqual(['framing_error', 'event', 'event']);
      const path = join(dir, 'oversized-line-1.jsonl');
      expect(out[0]).toMatchObject({
        kind: 'framing_error',
        error: 'too_long',
        bytes: Buffer.byteLength(huge),
        spillPath: path,
      });
      expect(statSync(path).size).toBe(CAP_BYTES);
      // The next over-long line got its own file, removed once it was read.
      expect(readdirSync(dir)).toEqual(['oversized-line-1.jsonl']);
    },
  );

  it('keeps the old drop when the spill directory is gone', () => {
    rmSync(dir, { recursive: true });
    const out = decode(`${answer(2000)}\n${small}\n`, 512);
    expect(out.map((l) => l.kind)).toEqual(['framing_error', 'event']);
    expect(out[0]).not.toHaveProperty('spillPath');
  });
});

describe('JsonLineDecoder with a spill and a reads predicate', () => {
  it('drops an over-long line of a declined kind without touching the disk, and spills a read one', () => {
    const decoder = new JsonLineDecoder(
      MAX_EVENT_BYTES,
      (e) => e.itemType !== 'command_execution',
      new LineSpill(dir, CAP_BYTES),
    );
    const output = JSON.stringify({
      type: 'item.completed',
      item: { id: 'c', type: 'command_execution', aggregated_output: 'x'.repeat(5000) },
    });
    const bytes = Buffer.from(`${output}\n${answer(2000)}\n`);
    const out: JsonLine[] = [];
    for (let at = 0; at < bytes.length; at += 300) out.push(...decoder.push(bytes.subarray(at, at + 300)));
    expect(out.map((l) => l.kind)).toEqual(['framing_error', 'event']);
    expect(out[0]).not.toHaveProperty('spillPath');
    expect(readdirSync(dir)).toEqual([]);
  });
});
