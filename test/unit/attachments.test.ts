import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { IncomingAttachment } from '../../src/channels/types.js';
import { AttachmentDownloadError, httpDownloadFailure, parseRetryAfter } from '../../src/channels/download.js';
import { DOWNLOAD_RETRY, describeAttachments, sniffImage, storeAttachments, taskWithTextAttachments, type DownloadRetryPolicy } from '../../src/harness/attachments.js';

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

describe('download retries (issue #13 item 3)', () => {
  /** The real policy with its waits recorded instead of slept, on a clock the waits advance. */
  function policy(): DownloadRetryPolicy & { waits: number[] } {
    let now = 0;
    const waits: number[] = [];
    return { ...DOWNLOAD_RETRY, waits, nowMs: () => now, sleep: async (ms) => void (waits.push(ms), (now += ms)) };
  }
  /** An attachment whose downloads fail with `failures` in turn, then succeed. */
  function flaky(name: string, bytes: Buffer | string, failures: (Error | 'cut')[]): IncomingAttachment & { opened: () => number } {
    let opened = 0;
    return {
      name,
      opened: () => opened,
      open: async () => {
        const failure = failures[opened++];
        if (failure === 'cut') return Readable.from((async function* () { yield Buffer.from('partial'); throw new Error('socket hang up'); })());
        if (failure) throw failure;
        return Readable.from([Buffer.from(bytes)]);
      },
    };
  }
  const http = (status: number, retryAfter: string | null = null): AttachmentDownloadError => httpDownloadFailure(status, retryAfter, 'Discord');

  it('retries a 5xx, a cut connection and a network error with backoff, then stores the whole file', async () => {
    const retry = policy();
    const shot = flaky('shot.png', PNG, [http(503), 'cut']);
    const notes = flaky('notes.txt', 'all of it', [new AttachmentDownloadError('the network failed (fetch failed: ECONNRESET)', { transient: true })]);
    const stored = await storeAttachments([shot, notes], join(dir, 'a'), limits, retry);
    expect(stored.map((a) => [a.kind, a.bytes])).toEqual([['image', PNG.length], ['text', 9]]);
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
    await expect(storeAttachments([shot], join(dir, 'a'), limits, retry)).rejects.toMatchObject({ message: expect.stringContaining('(tried 2 times)') });
    expect(retry.waits).toEqual([10_000]);
  });

  it('answers a permanent failure at once, one line per kind, never retried', async () => {
    const cases: [AttachmentDownloadError, string][] = [
      [http(404), 'Could not download f.png: Discord no longer has it (HTTP 404; its link may have expired). Send it again.'],
      [http(403), 'Could not download f.png: Discord refused the download (HTTP 403). Send it again.'],
      [new AttachmentDownloadError('Telegram lets bots download files of at most 20 MB', { transient: false, fix: 'Send a smaller file, or put it in the repository.' }),
        'Could not download f.png: Telegram lets bots download files of at most 20 MB. Send a smaller file, or put it in the repository.'],
      [new AttachmentDownloadError('Telegram no longer knows the file (its file reference expired)', { transient: false }),
        'Could not download f.png: Telegram no longer knows the file (its file reference expired). Send it again.'],
    ];
    for (const [failure, message] of cases) {
      const retry = policy();
      const file_ = flaky('f.png', PNG, [failure]);
      await expect(storeAttachments([file_], join(dir, 'a'), limits, retry)).rejects.toMatchObject({ code: 'attachment_refused', message });
      expect(file_.opened()).toBe(1);
      expect(retry.waits).toEqual([]);
    }
  });

  it('does not retry a file over the size cap', async () => {
    const retry = policy();
    const big = flaky('huge.log', 'x'.repeat(65 * 1024), []);
    await expect(storeAttachments([big], join(dir, 'a'), limits, retry)).rejects.toMatchObject({ message: expect.stringMatching(/^huge\.log is larger than 64 KB/) });
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
