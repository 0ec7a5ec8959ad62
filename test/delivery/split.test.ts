import { describe, expect, it } from 'vitest';
import { resplitFrom, splitMessage, splitWithReshapes } from '../../src/delivery/split.js';

const TELEGRAM = 4096;
const tag = '[run hr_0123456789ab]';

/** Strips continuation headers so the parts can be compared with the original text. */
function rejoin(parts: string[]): string {
  return parts.map((part, index) => (index === 0 ? part : part.slice(part.indexOf('\n') + 1))).join('');
}

describe('splitMessage', () => {
  it('keeps a message of exactly 4096 UTF-16 units whole', () => {
    const text = `${tag} completed\n${'a'.repeat(TELEGRAM - tag.length - 11)}`;
    expect(text.length).toBe(TELEGRAM);
    expect(splitMessage(text, TELEGRAM)).toEqual([text]);
  });

  it('splits 4097 units into two parts, each within the limit, losing nothing', () => {
    const text = `${tag} completed\n${'a'.repeat(TELEGRAM - tag.length - 10)}`;
    expect(text.length).toBe(TELEGRAM + 1);
    const parts = splitMessage(text, TELEGRAM);
    expect(parts).toHaveLength(2);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(TELEGRAM);
    expect(parts[1]).toMatch(/^\[run hr_0123456789ab\] \(2\/2\)\n/);
    expect(rejoin(parts)).toBe(text);
  });

  it('cuts on line boundaries when lines allow it', () => {
    const lines = Array.from({ length: 300 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
    const text = `${tag} completed\n${lines.join('\n')}`;
    const parts = splitMessage(text, 2000);
    for (const part of parts.slice(0, -1)) expect(part.endsWith('\n')).toBe(true);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(2000);
    expect(rejoin(parts)).toBe(text);
    expect(parts.map((p, i) => (i === 0 ? '' : p.split('\n')[0]))).toEqual(
      parts.map((_, i) => (i === 0 ? '' : `${tag} (${i + 1}/${parts.length})`)),
    );
  });

  it('never cuts a surrogate pair', () => {
    const text = `${tag} ${'😀'.repeat(5000)}`;
    const parts = splitMessage(text, TELEGRAM);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(TELEGRAM);
      expect(part).not.toMatch(/[\uD800-\uDBFF]$/);
      expect(part).not.toMatch(/^[\uDC00-\uDFFF]/m);
    }
    expect(rejoin(parts)).toBe(text);
  });

  it('does not leave a tiny first part when the only newline is early', () => {
    const text = `${tag} completed · codex\n${'z'.repeat(10_000)}`;
    const parts = splitMessage(text, TELEGRAM);
    expect(parts[0]!.length).toBe(TELEGRAM);
    expect(parts).toHaveLength(3);
    expect(rejoin(parts)).toBe(text);
  });

  it('numbers parts of a text without a run tag', () => {
    const parts = splitMessage('b'.repeat(250), 100);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts[1]).toMatch(/^\(2\/\d\)\n/);
    expect(rejoin(parts)).toBe('b'.repeat(250));
  });

  it('refuses a limit too small to hold a header', () => {
    expect(() => splitMessage('x', 10)).toThrow(RangeError);
  });

  it('re-splits from a refused part and numbers every part as finally sent, no number repeated', () => {
    const text = `${tag} completed\n${Array.from({ length: 60 }, (_, i) => `line ${i} ${'y'.repeat(20)}`).join('\n')}`;
    const parts = splitMessage(text, 1000);
    expect(parts).toHaveLength(2);
    // The platform refused part 2 (index 1): the rest is laid out again in parts of 400.
    const again = resplitFrom(parts, 1, 400);
    expect(again[0]).toBe(parts[0]);
    const headers = again.slice(1).map((p) => p.split('\n')[0]);
    const n = again.length;
    expect(n).toBeGreaterThan(2);
    expect(headers).toEqual(Array.from({ length: n - 1 }, (_, i) => `${tag} (${i + 2}/${n})`));
    expect(again.every((p) => p.length <= 1000) && again.slice(1).every((p) => p.length <= 400)).toBe(true);
    expect(rejoin(again)).toBe(text);
    // A refusal of the first part re-splits the whole message: 1/n stays header-less as before.
    const whole = resplitFrom(parts, 0, 300);
    expect(rejoin(whole)).toBe(text);
    expect(whole.slice(1).map((p) => p.split('\n')[0])).toEqual(
      Array.from({ length: whole.length - 1 }, (_, i) => `${tag} (${i + 2}/${whole.length})`),
    );
  });

  it('closes a fenced code block it cuts and opens it again, same fence and language, in the next part', () => {
    const code = Array.from({ length: 200 }, (_, i) => ` src/file-${i}.ts | ${i} ++--`).join('\n');
    const text = `${tag} completed\nChanges:\n~~~~diff\n${code}\n~~~~\nAfter the block.`;
    const parts = splitMessage(text, 1000);
    expect(parts.length).toBeGreaterThan(3);
    for (const [i, part] of parts.entries()) {
      expect(part.length).toBeLessThanOrEqual(1000);
      const body = i === 0 ? part : part.slice(part.indexOf('\n') + 1);
      // Every part has its fences paired: it renders on its own.
      expect(body.split('\n').filter((line) => /^~~~~/.test(line)).length % 2, `part ${i + 1}`).toBe(0);
      if (i > 0) expect(body.startsWith('~~~~diff\n')).toBe(true);
    }
    expect(parts.at(-1)!.endsWith('~~~~\nAfter the block.')).toBe(true);
    // Without the headers and the fences the split adds, the parts hold the text's lines in order.
    const lines = (t: string): string[] => t.split('\n').filter((line) => line !== '' && !line.startsWith('~~~~'));
    expect(parts.flatMap((part, i) => lines(i === 0 ? part : part.slice(part.indexOf('\n') + 1)))).toEqual(lines(text));
  });

  it('never cuts between a Markdown backslash and the character it escapes', () => {
    const text = `${'\\*'.repeat(400)}`;
    for (const part of splitMessage(text, 101)) expect(part.replace(/^\(\d+\/\d+\)\n/, '')).toMatch(/^(\\\*)+$/);
  });

  it('re-splits a text with code from the refused part, fences paired in every part', () => {
    const code = Array.from({ length: 120 }, (_, i) => `line ${i} ${'k'.repeat(20)}`).join('\n');
    const text = `${tag} completed\n\`\`\`ts\n${code}\n\`\`\``;
    const first = splitMessage(text, 2000);
    const again = splitWithReshapes(text, 2000, [{ fromPart: 1, maxLength: 500 }]);
    expect(again[0]).toBe(first[0]);
    expect(again.length).toBeGreaterThan(first.length);
    for (const part of again.slice(1)) {
      expect(part.length).toBeLessThanOrEqual(500);
      expect(part.split('\n')[1]).toBe('```ts');
    }
  });
});
