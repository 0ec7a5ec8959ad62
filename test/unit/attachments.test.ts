import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingAttachment } from '../../src/channels/types.js';
import { describeAttachments, sniffImage, storeAttachments, taskWithTextAttachments } from '../../src/harness/attachments.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const limits = { maxBytes: 64 * 1024, maxCount: 3 };

function file(name: string, bytes: Buffer | string, sizeBytes?: number): IncomingAttachment {
  return { name, ...(sizeBytes === undefined ? {} : { sizeBytes }), open: async () => Readable.from([Buffer.from(bytes)]) };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'attachments-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('sniffImage', () => {
  it('reads the type from the magic bytes, never the name', () => {
    expect(sniffImage(PNG)).toBe('image/png');
    expect(sniffImage(Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBe('image/jpeg');
    expect(sniffImage(Buffer.from('GIF89a......'))).toBe('image/gif');
    expect(sniffImage(Buffer.from('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImage(Buffer.from('%PDF-1.7\n'))).toBeUndefined();
  });
});

describe('storeAttachments', () => {
  it('stores an image and a text file privately, under names the sender cannot steer', async () => {
    const out = join(dir, 'attachments');
    const stored = await storeAttachments([file('shot.txt', PNG), file('../../etc/notes.md', 'line one\nline two\n')], out, limits);
    expect(stored.map((a) => [a.kind, a.name])).toEqual([['image', 'shot.txt'], ['text', 'notes.md']]);
    expect(stored[0]).toMatchObject({ mediaType: 'image/png', bytes: PNG.length });
    for (const a of stored) {
      expect(a.path.startsWith(`${out}/`)).toBe(true);
      expect((await stat(a.path)).mode & 0o777).toBe(0o600);
    }
    expect((await stat(out)).mode & 0o777).toBe(0o700);
    const task = taskWithTextAttachments('fix it', stored);
    expect(task).toBe('fix it\n\n--- Attached file: notes.md ---\nline one\nline two\n');
    expect(describeAttachments(stored)).toBe(`shot.txt (${PNG.length} B), notes.md (18 B)`);
  });

  it('refuses, naming the file, and keeps nothing: too large (announced or streamed), binary, too many', async () => {
    const out = join(dir, 'attachments');
    const cases: [IncomingAttachment[], RegExp][] = [
      [[file('big.png', PNG, 10 * 1024 * 1024)], /^big\.png is larger than 64 KB/],
      [[file('ok.txt', 'fine'), file('huge.log', 'x'.repeat(65 * 1024))], /^huge\.log is larger than 64 KB/],
      [[file('tool.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]))], /^tool\.bin is neither an image .* nor UTF-8 text/],
      [[file('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]))], /^latin1\.txt is neither an image/],
      [[file('a', 'a'), file('b', 'b'), file('c', 'c'), file('d', 'd')], /^4 files came with this task; at most 3/],
      [[{ name: 'gone.png', open: async () => { throw new Error('file reference expired'); } }], /^Could not download gone\.png: file reference expired/],
    ];
    for (const [attachments, message] of cases) {
      await expect(storeAttachments(attachments, out, limits)).rejects.toMatchObject({ code: 'attachment_refused', message: expect.stringMatching(message) });
      expect(existsSync(out) ? await readdir(out) : []).toEqual([]);
    }
  });
});
