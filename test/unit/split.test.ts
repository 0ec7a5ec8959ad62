import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../src/delivery/split.js';

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
});
