/**
 * Files that go with a task: stored in the run directory, their type read from
 * their content (never from the name), images handed to the model as images and text files made
 * part of the task.
 */
import { createWriteStream } from 'node:fs';
import { chmod, mkdir, open, readFile, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AttachmentDownloadError, MAX_DOWNLOAD_RETRY_AFTER_MS } from '../core/download-error.js';
import { DOWNLOAD_DEADLINES, withDownloadDeadlines, type DownloadDeadlines } from '../core/download-deadline.js';
import { BatonError } from '../core/errors.js';
import { safeErrorMessage } from '../core/logger.js';
import { readImageDimensions, type ImageMediaType } from './image-dimensions.js';

export type { ImageMediaType } from './image-dimensions.js';

/**
 * A file that came with a task, as the harness needs it: what a channel adapter hands over
 * (its incoming attachment) fits this shape, so the harness does not depend on the channels.
 */
export interface AttachmentSource {
  /** The name the sender gave it (shown, never trusted as a path or a type). */
  name: string;
  /** Size the platform announced, in bytes, when it did. */
  sizeBytes?: number | undefined;
  /**
   * Opens the file's bytes.
   *
   * @param signal aborts the download (its deadlines passed, or the launch was stopped).
   * @throws Error when the platform refuses or the network fails.
   */
  open(signal?: AbortSignal): Promise<Readable>;
}

/** A stored attachment. */
export type StoredAttachment =
  | { kind: 'image'; name: string; path: string; bytes: number; mediaType: ImageMediaType }
  | { kind: 'text'; name: string; path: string; bytes: number; text: string };

/** Limits on what goes with one task. */
export interface AttachmentLimits {
  /** Largest file, in bytes (`[harness] max_attachment_mb`). */
  maxBytes: number;
  /** Most files with one task. */
  maxCount: number;
  /** Largest image, in pixels (width × height, read from its header; `[harness] max_image_pixels`). */
  maxImagePixels: number;
}

/** Most files with one task. */
export const MAX_ATTACHMENTS = 10;
/** Largest text file made part of the task, in bytes; larger text is refused. */
export const MAX_TEXT_ATTACHMENT_BYTES = 1024 * 1024;

/** How a failed download is retried: a transient failure (network, 5xx, 429) only. */
export interface DownloadRetryPolicy {
  /** Tries in all, the first included. */
  attempts: number;
  /** Wait before the second try, in ms; tripled before each later one. */
  firstDelayMs: number;
  /** Longest `Retry-After` honoured, in ms. */
  maxRetryAfterMs: number;
  /** No try starts later than this after the first, in ms. */
  budgetMs: number;
  /** Deadlines of each try. @default {@link DOWNLOAD_DEADLINES} */
  deadlines?: DownloadDeadlines;
  /** Ends the download now with its reason (the launch was stopped). @default none */
  stop?: AbortSignal;
  /** @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** @default Date.now */
  nowMs?: () => number;
}

/**
 * 3 tries: after 1 s, then 3 s (or the platform's `Retry-After`, at most 10 s), all begun within
 * 30 s; each try ends after 10 s without a byte or 60 s in all ({@link DOWNLOAD_DEADLINES}).
 */
export const DOWNLOAD_RETRY: DownloadRetryPolicy = {
  attempts: 3,
  firstDelayMs: 1_000,
  maxRetryAfterMs: MAX_DOWNLOAD_RETRY_AFTER_MS,
  budgetMs: 30_000,
};

/**
 * Runs `attempt` (one whole download) until it succeeds, retrying only a transient failure
 * ({@link AttachmentDownloadError} with `transient`, or a stream cut after the download began).
 *
 * @throws BatonError `attachment_refused` with one line naming the file and the reason: at once for
 *   a permanent failure (404, 403, too large for the platform, an expired file reference), after
 *   the last try for a transient one. A BatonError `attempt` throws itself (a cap) passes through.
 */
export async function withDownloadRetry<T>(
  name: string,
  attempt: () => Promise<T>,
  policy: DownloadRetryPolicy = DOWNLOAD_RETRY,
): Promise<T> {
  const sleep = policy.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const now = policy.nowMs ?? Date.now;
  const started = now();
  for (let tried = 1; ; tried++) {
    let failure: AttachmentDownloadError;
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof AttachmentDownloadError) failure = err;
      else if (err instanceof BatonError) throw err;
      else failure = new AttachmentDownloadError(safeErrorMessage(err), { transient: false, cause: err });
    }
    if (!failure.transient) throw refused(`Could not download ${name}: ${failure.message}. ${failure.fix}`, failure);
    const waitMs =
      failure.retryAfterMs !== undefined
        ? Math.min(failure.retryAfterMs, policy.maxRetryAfterMs)
        : policy.firstDelayMs * 3 ** (tried - 1);
    if (tried >= policy.attempts || now() - started + waitMs > policy.budgetMs) {
      throw refused(
        `Could not download ${name}: ${failure.message} (tried ${tried} time${tried === 1 ? '' : 's'}). Send it again.`,
        failure,
      );
    }
    if (policy.stop?.aborted) throw policy.stop.reason;
    await sleep(waitMs);
    if (policy.stop?.aborted) throw policy.stop.reason;
  }
}

/**
 * The image type of `head` from its magic bytes (PNG, JPEG, GIF, WebP), or undefined.
 *
 * @param head the first bytes of the file (12 are enough).
 */
export function sniffImage(head: Buffer): ImageMediaType | undefined {
  if (head.length >= 8 && head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'image/jpeg';
  if (head.length >= 6 && /^GIF8[79]a$/.test(head.subarray(0, 6).toString('latin1'))) return 'image/gif';
  if (
    head.length >= 12 &&
    head.subarray(0, 4).toString('latin1') === 'RIFF' &&
    head.subarray(8, 12).toString('latin1') === 'WEBP'
  )
    return 'image/webp';
  return undefined;
}

/**
 * Downloads every attachment into `dir` (created 0700; files 0600) and classifies each.
 *
 * @throws BatonError `attachment_refused` naming the file and why: too many files, over the size
 *   cap, an image over the pixel cap or whose header gives no width and height, a type that is neither an image nor UTF-8 text, text over 1 MiB, or a failed download.
 *   Whatever was stored is removed first.
 */
export async function storeAttachments(
  attachments: readonly AttachmentSource[],
  dir: string,
  limits: AttachmentLimits,
  retry: DownloadRetryPolicy = DOWNLOAD_RETRY,
): Promise<StoredAttachment[]> {
  if (attachments.length > limits.maxCount) {
    throw refused(`${attachments.length} files came with this task; at most ${limits.maxCount} can. Send fewer.`);
  }
  for (const attachment of attachments) {
    if (attachment.sizeBytes !== undefined && attachment.sizeBytes > limits.maxBytes)
      throw tooLarge(attachment.name, limits.maxBytes);
  }
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  const stored: StoredAttachment[] = [];
  try {
    for (const [index, attachment] of attachments.entries())
      stored.push(await storeOne(attachment, dir, index, limits, retry));
    return stored;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function storeOne(
  attachment: AttachmentSource,
  dir: string,
  index: number,
  limits: AttachmentLimits,
  retry: DownloadRetryPolicy,
): Promise<StoredAttachment> {
  const name = displayName(attachment.name, index);
  // The stored name never comes from the sender alone: a number first, and no path separators.
  const path = join(dir, `${index + 1}-${name.replace(/[^\w.-]+/g, '_').slice(0, 100)}`);
  let bytes = 0;
  await withDownloadRetry(
    name,
    () =>
      withDownloadDeadlines(
        attachment,
        async (source) => {
          bytes = 0;
          const cap = new Transform({
            transform(chunk: Buffer, _encoding, done) {
              bytes += chunk.length;
              done(bytes > limits.maxBytes ? tooLarge(name, limits.maxBytes) : null, chunk);
            },
          });
          try {
            // Each try writes the file from its start ('w' truncates).
            await pipeline(source, cap, createWriteStream(path, { mode: 0o600 }));
          } catch (err) {
            if (err instanceof BatonError) throw err;
            // The answer began and was cut (a reset connection): worth another try.
            throw new AttachmentDownloadError(`the download was cut off (${safeErrorMessage(err)})`, {
              transient: true,
              cause: err,
            });
          }
        },
        retry.deadlines ?? DOWNLOAD_DEADLINES,
        retry.stop,
      ),
    retry,
  );
  const handle = await open(path, 'r');
  const head = Buffer.alloc(12);
  try {
    await handle.read(head, 0, 12, 0);
  } finally {
    await handle.close();
  }
  const mediaType = sniffImage(head);
  if (mediaType) {
    // Checked before any CLI sees the file: a CLI decodes the whole image into memory (4 bytes a
    // pixel or so) before it scales it down, whatever the file's size on disk.
    const size = await readImageDimensions(path, mediaType);
    const format = IMAGE_FORMAT[mediaType];
    if (!size) {
      throw refused(
        `${name} looks like a ${format} image, but its width and height cannot be read from its header (the file is cut short or malformed), so it cannot go with the task. Save it again and send it again.`,
      );
    }
    if (size.width * size.height > limits.maxImagePixels) {
      throw refused(
        `${name} is ${size.width}×${size.height} pixels (${megapixels(size.width * size.height)} megapixels), more than [harness] max_image_pixels allows (${megapixels(limits.maxImagePixels)} megapixels), so it cannot go with the task. Scale it down (or crop it) and send it again.`,
      );
    }
    return { kind: 'image', name, path, bytes, mediaType };
  }
  if (bytes > MAX_TEXT_ATTACHMENT_BYTES) {
    throw refused(
      `${name} is neither an image (PNG, JPEG, GIF, WebP) nor a text file of at most 1 MB, so it cannot go with the task.`,
    );
  }
  const text = decodeUtf8(await readFile(path));
  if (text === undefined || text.includes('\u0000')) {
    throw refused(`${name} is neither an image (PNG, JPEG, GIF, WebP) nor UTF-8 text, so it cannot go with the task.`);
  }
  return { kind: 'text', name, path, bytes, text };
}

/** `bytes` as UTF-8 text, or undefined when they are not valid UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The task as the agent gets it: the owner's words, then each text attachment under a heading
 * naming the file.
 */
export function taskWithTextAttachments(task: string, attachments: readonly StoredAttachment[]): string {
  const texts = attachments.filter((a) => a.kind === 'text');
  if (texts.length === 0) return task;
  return [task, ...texts.map((a) => `\n\n--- Attached file: ${a.name} ---\n${a.text}`)].join('');
}

/** `shot.png (12 KB), notes.txt (1 KB)` for the `started` message. */
export function describeAttachments(attachments: readonly Pick<StoredAttachment, 'name' | 'bytes'>[]): string {
  return attachments.map((a) => `${a.name} (${formatSize(a.bytes)})`).join(', ');
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.ceil(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const IMAGE_FORMAT: Record<ImageMediaType, string> = {
  'image/png': 'PNG',
  'image/jpeg': 'JPEG',
  'image/gif': 'GIF',
  'image/webp': 'WebP',
};

/** `400`, `65.5`: millions of pixels, one decimal at most. */
function megapixels(pixels: number): string {
  return String(Math.round(pixels / 100_000) / 10);
}

function displayName(name: string, index: number): string {
  const clean = basename(name.replace(/\\/g, '/'))
    .replace(/[\u0000-\u001f\u007f]/g, '')
    .trim();
  return clean === '' || clean === '.' || clean === '..' ? `file-${index + 1}` : clean.slice(0, 200);
}

function tooLarge(name: string, maxBytes: number): BatonError {
  return refused(
    `${name} is larger than ${formatSize(maxBytes)} ([harness] max_attachment_mb), so it cannot go with the task.`,
  );
}

function refused(message: string, cause?: unknown): BatonError {
  return new BatonError('attachment_refused', message, cause === undefined ? {} : { cause });
}
