/**
 * Lines the reducer does not need are spooled as raw bytes without a parse (issue #15): the
 * `type` is sniffed from the bytes, a sniff that could be wrong falls back to a full parse, the
 * facts are the same as with every line parsed, and spooled bytes are never re-encoded.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { JsonLineDecoder, sniffEvent } from '../../src/harness/json-lines.js';
import { RunStream } from '../../src/harness/run-stream.js';
import { claudeVendor } from '../../src/harness/vendors/claude.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';
import type { StreamReducer } from '../../src/harness/vendors/types.js';

const FIXTURES = new URL('../fixtures/vendor-streams/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'baton-sniff-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

const sniff = (text: string | Buffer) => sniffEvent(typeof text === 'string' ? Buffer.from(text) : text);

/** Every fixture of a vendor, as [name, bytes]. */
function fixtures(vendor: 'codex' | 'claude'): [string, Buffer][] {
  const out: [string, Buffer][] = [];
  const walk = (url: URL, prefix: string): void => {
    for (const entry of readdirSync(url, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(new URL(`${entry.name}/`, url), `${prefix}${entry.name}/`);
      else if (entry.name.endsWith('.jsonl') && `${prefix}${entry.name}`.startsWith(vendor))
        out.push([`${prefix}${entry.name}`, readFileSync(new URL(entry.name, url))]);
    }
  };
  walk(FIXTURES, '');
  return out;
}

/** Runs `bytes` through RunStream in `size`-byte chunks; returns facts, events seen and the spool. */
async function stream(bytes: Buffer, reducer: StreamReducer, size: number, reads?: () => boolean) {
  const path = join(dir, `spool-${Math.random().toString(16).slice(2)}.jsonl`);
  const spool = createWriteStream(path);
  const events: unknown[] = [];
  const s = new RunStream(
    { maxEventBytes: 1_048_576, maxFramingErrors: 20, maxSpoolBytes: 64 * 1_048_576, maxOutputBytes: 256 * 1_048_576 },
    reducer,
    spool,
    {
      onEvent: (e) => void events.push(e),
      onSession: () => {},
      onTruncated: () => {},
      onViolation: () => {},
      ...(reads ? { reads } : {}),
    },
  );
  for (let i = 0; i < bytes.length; i += size) s.push(bytes.subarray(i, i + size));
  s.end();
  await new Promise<void>((resolve) => spool.end(() => resolve()));
  return { facts: reducer.facts(), events, spooled: readFileSync(path) };
}

describe('sniffEvent', () => {
  it('reads the type, and codex item type, from the start of the line', () => {
    expect(sniff('{"type":"turn.started"}')).toEqual({ type: 'turn.started' });
    expect(sniff('{"type":"item.completed","item":{"id":"item_1","type":"reasoning","text":"x"}}')).toEqual({
      type: 'item.completed',
      itemType: 'reasoning',
    });
    expect(sniff('{"type":"user","message":{"role":"user","content":"x"},"session_id":"s"}\r')).toEqual({
      type: 'user',
    });
  });

  it('cannot be sure, so says nothing (the line is parsed), for', () => {
    // another key first, spaces, an escape in the type
    expect(sniff('{"id":"1","type":"turn.started"}')).toBeUndefined();
    expect(sniff('{ "type":"turn.started"}')).toBeUndefined();
    expect(sniff('{"type":"item\\u002ecompleted"}')).toBeUndefined();
    // a second "type" key later: JSON.parse lets the last one win
    expect(sniff('{"type":"item.started","x":1,"type":"turn.completed"}')).toBeUndefined();
    expect(
      sniff('{"type":"item.completed","item":{"id":"i","type":"reasoning","type":"agent_message","text":"answer"}}'),
    ).toBeUndefined();
    // a nested "type" (codex web_search action): counted, so parsed
    expect(
      sniff('{"type":"item.completed","item":{"id":"item_4","type":"web_search","action":{"type":"search"}}}'),
    ).toBeUndefined();
    // a line that does not end its object (cut off, or garbage after it)
    expect(sniff('{"type":"item.started","item":{"id":"a","type":"x"')).toBeUndefined();
    expect(sniff('{"type":"turn.started"} trailing')).toBeUndefined();
    expect(sniff('')).toBeUndefined();
  });

  it('is not fooled by "type" inside a string value (escaped quotes)', () => {
    expect(
      sniff(
        '{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"say \\"type\\":\\"agent_message\\""}}',
      ),
    ).toEqual({ type: 'item.completed', itemType: 'reasoning' });
  });
});

describe('JsonLineDecoder with a reads predicate', () => {
  it('hands declined lines on as bytes without calling JSON.parse', () => {
    const parse = vi.spyOn(JSON, 'parse');
    const decoder = new JsonLineDecoder(1024, (e) => e.type !== 'item.started');
    const text =
      '{"type":"item.started","item":{"id":"a","type":"command_execution"}}\n{"type":"turn.completed","usage":{}}\n';
    const out = decoder.push(Buffer.from(text));
    expect(out.map((l) => l.kind)).toEqual(['skipped', 'event']);
    expect(parse).toHaveBeenCalledTimes(1);
    expect(out[0]).toMatchObject({ kind: 'skipped', event: { type: 'item.started', itemType: 'command_execution' } });
  });

  it('still bounds a declined kind by max_event_bytes', () => {
    const decoder = new JsonLineDecoder(100, () => false);
    const long = `{"type":"item.started","item":{"id":"a","type":"x","text":"${'a'.repeat(200)}"}}\n`;
    expect(decoder.push(Buffer.from(long))).toMatchObject([{ kind: 'framing_error', error: 'too_long' }]);
  });
});

describe('RunStream skipping unread lines', () => {
  for (const [vendor, make] of [
    ['codex', () => codexVendor.newReducer()],
    ['claude', () => claudeVendor.newReducer()],
  ] as const) {
    it(`gives the same facts and the same spool as parsing every line, on every ${vendor} fixture and chunk size`, async () => {
      const all = fixtures(vendor);
      expect(all.length).toBeGreaterThan(3);
      for (const [name, bytes] of all) {
        for (const size of [1, 7, 4096, bytes.length]) {
          const parsedAll = await stream(bytes, make(), size, () => true);
          const skipping = await stream(bytes, make(), size);
          expect(skipping.facts, `${name} @${size}`).toEqual(parsedAll.facts);
          expect(skipping.events.length, name).toBe(parsedAll.events.length);
          expect(skipping.spooled.equals(parsedAll.spooled), name).toBe(true);
        }
      }
    });
  }

  it('skips most of a chatty codex run (command output, reasoning) and spools it byte for byte; a started command is read for the live status', async () => {
    // 0xff is not UTF-8: a decode and re-encode would have written U+FFFD (ef bf bd) instead.
    const odd = Buffer.concat([
      Buffer.from(
        '{"type":"item.completed","item":{"id":"item_2","type":"command_execution","aggregated_output":"bin ',
      ),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(' ok","exit_code":0}}\n'),
    ]);
    const bytes = Buffer.concat([
      Buffer.from('{"type":"thread.started","thread_id":"t-1"}\n{"type":"turn.started"}\n'),
      Buffer.from('{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"ls"}}\n'),
      odd,
      Buffer.from(
        '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"done"}}\n{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":1}}\n',
      ),
    ]);
    const parse = vi.spyOn(JSON, 'parse');
    const { facts, events, spooled } = await stream(bytes, codexVendor.newReducer(), 64);
    expect(parse).toHaveBeenCalledTimes(4);
    expect(events.filter((e) => e === undefined)).toHaveLength(2);
    expect(facts).toMatchObject({
      sessionId: 't-1',
      finalMessage: 'done',
      terminal: { kind: 'completed' },
      eventCount: 6,
    });
    expect(facts.live?.step).toMatch(/running ls/);
    expect(spooled.equals(bytes)).toBe(true);
  });
});
