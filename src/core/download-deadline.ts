/**
 * Deadlines of one try of a download: a platform that stops sending (a stalled CDN answer, a
 * `getFile` that never returns) would otherwise hold the try for as long as the HTTP client
 * waits (undici: 300 s for headers and between body chunks).
 */
import { Transform, type Readable } from 'node:stream';
import { AttachmentDownloadError } from './download-error.js';

/** Deadlines of one try, in ms. */
export interface DownloadDeadlines {
  /** Longest wait for the answer to begin and between two chunks of it. */
  readTimeoutMs: number;
  /** Longest one try may take in all. */
  attemptTimeoutMs: number;
}

/** 10 s without a byte, or 60 s in all (20 MB then needs about 340 KB/s). */
export const DOWNLOAD_DEADLINES: DownloadDeadlines = { readTimeoutMs: 10_000, attemptTimeoutMs: 60_000 };

/**
 * Opens `attachment` with an abort signal and hands `consume` its bytes; a try that passes a
 * deadline is aborted (the request and the stream) and fails as a transient download error, so
 * the retry policy tries again. `stop`, when it aborts, ends the try with its reason.
 *
 * @throws AttachmentDownloadError `transient` when a deadline passed; else what `open` or
 *   `consume` threw, or `stop`'s reason.
 */
export async function withDownloadDeadlines<T>(
  attachment: { open(signal?: AbortSignal): Promise<Readable> },
  consume: (source: Readable) => Promise<T>,
  deadlines: DownloadDeadlines = DOWNLOAD_DEADLINES,
  stop?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const abort = (reason: unknown): void => {
    if (!controller.signal.aborted) controller.abort(reason);
  };
  const seconds = (ms: number): string => `${Math.round(ms / 1000)} s`;
  const total = setTimeout(
    () =>
      abort(
        new AttachmentDownloadError(`the download took longer than ${seconds(deadlines.attemptTimeoutMs)}`, {
          transient: true,
        }),
      ),
    deadlines.attemptTimeoutMs,
  );
  let idle: NodeJS.Timeout | undefined;
  const touch = (): void => {
    clearTimeout(idle);
    idle = setTimeout(
      () =>
        abort(
          new AttachmentDownloadError(
            `the download stalled (nothing received for ${seconds(deadlines.readTimeoutMs)})`,
            { transient: true },
          ),
        ),
      deadlines.readTimeoutMs,
    );
  };
  const onStop = (): void => abort(stop?.reason);
  if (stop?.aborted) onStop();
  stop?.addEventListener('abort', onStop, { once: true });
  const aborted = new Promise<never>((_, reject) => {
    if (controller.signal.aborted) reject(controller.signal.reason);
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
  });
  aborted.catch(() => undefined);
  touch();
  let source: Readable | undefined;
  try {
    // An `open` that ignores the signal (a local file) still loses the race.
    const opening = attachment.open(controller.signal);
    // A late stream, opened after the deadline won, is closed rather than left holding its connection.
    opening.then(
      (late) => {
        if (controller.signal.aborted && late !== source) late.destroy();
      },
      () => undefined,
    );
    source = await Promise.race([opening, aborted]);
    touch();
    const watched = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        touch();
        done(null, chunk);
      },
    });
    const opened = source;
    opened.once('error', (err) => watched.destroy(err));
    controller.signal.addEventListener(
      'abort',
      () => {
        opened.destroy();
        watched.destroy(controller.signal.reason as Error);
      },
      { once: true },
    );
    opened.pipe(watched);
    return await Promise.race([consume(watched), aborted]);
  } catch (err) {
    // The deadline's own reason, not the stream error its abort caused.
    if (controller.signal.aborted) throw controller.signal.reason;
    throw err;
  } finally {
    clearTimeout(total);
    clearTimeout(idle);
    stop?.removeEventListener('abort', onStop);
    if (!controller.signal.aborted) controller.abort(new Error('download finished'));
    source?.destroy();
  }
}
