import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingAttachment } from '../../src/channels/types.js';
import { AttachmentDownloadError, httpDownloadFailure, parseRetryAfter } from '../../src/channels/download.js';
import {
  DOWNLOAD_RETRY,
  describeAttachments,
  sniffImage,
  storeAttachments,
  taskWithTextAttachments,
  type DownloadRetryPolicy,
} from '../../src/harness/attachments.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const limits = { maxBytes: 64 * 1024, maxCount: 3, maxImagePixels: 50_000_000 };

function file(name: string, bytes: Buffer | string, sizeBytes?: number): IncomingAttachment {
  return {
    name,
    ...(sizeBytes === undefined ? {} : { sizeBytes }),
    open: async () => Readable.from([Buffer.from(bytes)]),
  };
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
    const stored = await storeAttachments(
      [file('shot.txt', PNG), file('../../etc/notes.md', 'line one\nline two\n')],
      out,
      limits,
    );
    expect(stored.map((a) => [a.kind, a.name])).toEqual([
      ['image', 'shot.txt'],
      ['text', 'notes.md'],
    ]);
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
      [
        [file('tool.bin', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]))],
        /^tool\.bin is neither an image .* nor UTF-8 text/,
      ],
      [[file('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]))], /^latin1\.txt is neither an image/],
      [[file('a', 'a'), file('b', 'b'), file('c', 'c'), file('d', 'd')], /^4 files came with this task; at most 3/],
      [
        [
          {
            name: 'gone.png',
            open: async () => {
              throw new Error('file reference expired');
            },
          },
        ],
        /^Could not download gone\.png: file reference expired/,
      ],
    ];
    for (const [attachments, message] of cases) {
      await expect(storeAttachments(attachments, out, limits)).rejects.toMatchObject({
        code: 'attachment_refused',
        message: expect.stringMatching(message),
      });
      expect(existsSync(out) ? await readdir(out) : []).toEqual([]);
    }
  });
});

describe('download retries (issue #13 item 3)', () => {
  /** The real policy with its waits recorded instead of slept, on a clock the waits advance. */
  function policy(): DownloadRetryPolicy & { waits: number[] } {
    let now = 0;
    const waits: number[] = [];
    return { ...DOWNLOAD_RETRY, waits, nowMs: () => now, sleep: async (ms) => void (waits.push(ms), (now += ms)) };
  }
  /** An attachment whose downloads fail with `failures` in turn, then succeed. */
  function flaky(
    name: string,
    bytes: Buffer | string,
    failures: (Error | 'cut')[],
  ): IncomingAttachment & { opened: () => number } {
    let opened = 0;
    return {
      name,
      opened: () => opened,
      open: async () => {
        const failure = failures[opened++];
        if (failure === 'cut')
          return Readable.from(
            (async function* () {
              yield Buffer.from('partial');
              throw new Error('socket hang up');
            })(),
          );
        if (failure) throw failure;
        return Readable.from([Buffer.from(bytes)]);
      },
    };
  }
  const http = (status: number, retryAfter: string | null = null): AttachmentDownloadError =>
    httpDownloadFailure(status, retryAfter, 'Discord');

  it('retries a 5xx, a cut connection and a network error with backoff, then stores the whole file', async () => {
    const retry = policy();
    const shot = flaky('shot.png', PNG, [http(503), 'cut']);
    const notes = flaky('notes.txt', 'all of it', [
      new AttachmentDownloadError('the network failed (fetch failed: ECONNRESET)', { transient: true }),
    ]);
    const stored = await storeAttachments([shot, notes], join(dir, 'a'), limits, retry);
    expect(stored.map((a) => [a.kind, a.bytes])).toEqual([
      ['image', PNG.length],
      ['text', 9],
    ]);
    expect([shot.opened(), notes.opened()]).toEqual([3, 2]);
    expect(retry.waits).toEqual([1_000, 3_000, 1_000]);
  });

  it('honours Retry-After of a 429, up to 10 s', async () => {
    const retry = policy();
    const shot = flaky('shot.png', PNG, [http(429, '2'), http(429, '120')]);
    await storeAttachments([shot], join(dir, 'a'), limits, retry);
    expect(retry.waits).toEqual([2_000, 10_000]);
  });

  it('gives up after 3 tries with one line naming the file and the reason', async () => {
    const retry = policy();
    const shot = flaky('shot.png', PNG, [http(502), http(502), http(502), http(502)]);
    await expect(storeAttachments([shot], join(dir, 'a'), limits, retry)).rejects.toMatchObject({
      code: 'attachment_refused',
      message: 'Could not download shot.png: Discord failed to serve it (HTTP 502) (tried 3 times). Send it again.',
    });
    expect(shot.opened()).toBe(3);
    expect(retry.waits).toEqual([1_000, 3_000]);
  });

  it('stops early rather than wait past 30 s in all', async () => {
    const retry = { ...policy(), budgetMs: 12_000 };
    const shot = flaky('shot.png', PNG, [http(429, '10'), http(429, '10'), http(429, '10')]);
    await expect(storeAttachments([shot], join(dir, 'a'), limits, retry)).rejects.toMatchObject({
      message: expect.stringContaining('(tried 2 times)'),
    });
    expect(retry.waits).toEqual([10_000]);
  });

  it('answers a permanent failure at once, one line per kind, never retried', async () => {
    const cases: [AttachmentDownloadError, string][] = [
      [
        http(404),
        'Could not download f.png: Discord no longer has it (HTTP 404; its link may have expired). Send it again.',
      ],
      [http(403), 'Could not download f.png: Discord refused the download (HTTP 403). Send it again.'],
      [
        new AttachmentDownloadError('Telegram lets bots download files of at most 20 MB', {
          transient: false,
          fix: 'Send a smaller file, or put it in the repository.',
        }),
        'Could not download f.png: Telegram lets bots download files of at most 20 MB. Send a smaller file, or put it in the repository.',
      ],
      [
        new AttachmentDownloadError('Telegram no longer knows the file (its file reference expired)', {
          transient: false,
        }),
        'Could not download f.png: Telegram no longer knows the file (its file reference expired). Send it again.',
      ],
    ];
    for (const [failure, message] of cases) {
      const retry = policy();
      const file_ = flaky('f.png', PNG, [failure]);
      await expect(storeAttachments([file_], join(dir, 'a'), limits, retry)).rejects.toMatchObject({
        code: 'attachment_refused',
        message,
      });
      expect(file_.opened()).toBe(1);
      expect(retry.waits).toEqual([]);
    }
  });

  it('does not retry a file over the size cap', async () => {
    const retry = policy();
    const big = flaky('huge.log', 'x'.repeat(65 * 1024), []);
    await expect(storeAttachments([big], join(dir, 'a'), limits, retry)).rejects.toMatchObject({
      message: expect.stringMatching(/^huge\.log is larger than 64 KB/),
    });
    expect(big.opened()).toBe(1);
  });

  it('reads Retry-After in seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3')).toBe(3_000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect([408, 429, 500, 503].map((s) => http(s).transient)).toEqual([true, true, true, true]);
    expect([400, 401, 403, 404, 410].map((s) => http(s).transient)).toEqual([false, false, false, false, false]);
  });
});

describe('image dimensions, read from the header before any CLI decodes the image', () => {
  /** A PNG that is only its signature and IHDR chunk: enough for its dimensions, nothing to decode. */
  function pngHeader(width: number, height: number): Buffer {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(width, 0);
    ihdr.writeUInt32BE(height, 4);
    ihdr.set([8, 6, 0, 0, 0], 8);
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      Buffer.from('IHDR'),
      ihdr,
      Buffer.alloc(4),
    ]);
  }
  /** A baseline JPEG: SOI, a JFIF APP0 segment, then SOF0 with the dimensions. */
  function jpegHeader(width: number, height: number): Buffer {
    const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
    const sof = Buffer.from([
      0xff,
      0xc0,
      0x00,
      0x11,
      0x08,
      height >> 8,
      height & 0xff,
      width >> 8,
      width & 0xff,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
    ]);
    return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
  }
  function gifHeader(width: number, height: number): Buffer {
    const screen = Buffer.alloc(7);
    screen.writeUInt16LE(width, 0);
    screen.writeUInt16LE(height, 2);
    return Buffer.concat([Buffer.from('GIF89a'), screen, Buffer.from(';')]);
  }
  /** An extended WebP (VP8X chunk): canvas width and height minus one, 24-bit little-endian. */
  function webpHeader(width: number, height: number): Buffer {
    const vp8x = Buffer.alloc(10);
    vp8x.writeUIntLE(width - 1, 4, 3);
    vp8x.writeUIntLE(height - 1, 7, 3);
    const body = Buffer.concat([Buffer.from('WEBPVP8X'), Buffer.from([10, 0, 0, 0]), vp8x]);
    const size = Buffer.alloc(4);
    size.writeUInt32LE(body.length, 0);
    return Buffer.concat([Buffer.from('RIFF'), size, body]);
  }

  it('refuses a 20000×20000 PNG of a few bytes, and a JPEG, GIF or WebP over the limit, naming the file, the size and the key', async () => {
    const out = join(dir, 'attachments');
    const cases: [string, Buffer, string][] = [
      [
        'huge.png',
        pngHeader(20_000, 20_000),
        'huge.png is 20000×20000 pixels (400 megapixels), more than [harness] max_image_pixels allows (50 megapixels), so it cannot go with the task. Scale it down (or crop it) and send it again.',
      ],
      ['photo.jpg', jpegHeader(10_000, 6_000), 'photo.jpg is 10000×6000 pixels (60 megapixels)'],
      ['anim.gif', gifHeader(65_535, 1_000), 'anim.gif is 65535×1000 pixels (65.5 megapixels)'],
      ['pic.webp', webpHeader(16_383, 16_383), 'pic.webp is 16383×16383 pixels (268.4 megapixels)'],
    ];
    for (const [name, bytes, message] of cases) {
      await expect(storeAttachments([file('ok.txt', 'fine'), file(name, bytes)], out, limits)).rejects.toMatchObject({
        code: 'attachment_refused',
        message: expect.stringContaining(message),
      });
      expect(existsSync(out) ? await readdir(out) : []).toEqual([]);
    }
  });

  it('keeps an image within the limit, whatever its format, and follows the configured limit', async () => {
    const stored = await storeAttachments(
      [
        file('a.png', pngHeader(8_000, 6_000)),
        file('b.jpg', jpegHeader(7_000, 7_000)),
        file('c.gif', gifHeader(100, 100)),
        file('d.webp', webpHeader(4_000, 3_000)),
      ],
      join(dir, 'a'),
      { ...limits, maxCount: 4 },
    );
    expect(stored.map((a) => a.kind === 'image' && a.mediaType)).toEqual([
      'image/png',
      'image/jpeg',
      'image/gif',
      'image/webp',
    ]);
    await expect(
      storeAttachments([file('a.png', pngHeader(2_000, 1_100))], join(dir, 'b'), {
        ...limits,
        maxImagePixels: 2_000_000,
      }),
    ).rejects.toMatchObject({
      code: 'attachment_refused',
      message: expect.stringContaining(
        'a.png is 2000×1100 pixels (2.2 megapixels), more than [harness] max_image_pixels allows (2 megapixels)',
      ),
    });
  });

  it('refuses an image whose header gives no dimensions, since its size cannot be known before decoding it', async () => {
    const cases: [string, Buffer][] = [
      ['cut.png', pngHeader(10, 10).subarray(0, 20)],
      ['zero.png', pngHeader(0, 10)],
      ['nosof.jpg', Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0, 0]), Buffer.alloc(64)])],
      ['bad.webp', Buffer.from('RIFF\0\0\0\0WEBPJUNKJUNKJUNK')],
    ];
    for (const [name, bytes] of cases) {
      await expect(storeAttachments([file(name, bytes)], join(dir, 'a'), limits)).rejects.toMatchObject({
        code: 'attachment_refused',
        message: expect.stringMatching(
          new RegExp(
            `^${name.replace('.', '\\.')} looks like a (PNG|JPEG|WebP) image, but its width and height cannot be read from its header`,
          ),
        ),
      });
    }
  });
});
