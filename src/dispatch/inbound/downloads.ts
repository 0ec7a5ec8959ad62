/** The launches still downloading their files, so that `/stop` (which overtakes them) ends them too. */
import { STOPPED_WHILE_DOWNLOADING } from '../../wording/dispatch.js';
import type { IncomingAttachment, InboundMessage } from '../../channels/types.js';
import { BatonError } from '../../core/errors.js';
import { DOWNLOAD_RETRY, MAX_ATTACHMENTS, storeAttachments, type StoredAttachment } from '../../harness/attachments.js';
import { heldKey } from './held-key.js';

/** The limits a launch's files are stored under: bytes per file and pixels per image. */
export interface DownloadLimits {
  maxAttachmentBytes: number;
  maxImagePixels: number;
}

/** Launches still downloading their files, by conversation. */
export class Downloads {
  private readonly downloading = new Map<string, Set<AbortController>>();

  /**
   * A launch's files, downloaded into `dir`; a {@link stop} meanwhile ends the download.
   *
   * @throws BatonError `attachment_refused` (see storeAttachments), `launch_stopped`.
   */
  async download(
    incoming: readonly IncomingAttachment[],
    dir: string,
    message: InboundMessage,
    limits: DownloadLimits,
  ): Promise<StoredAttachment[]> {
    const stop = new AbortController();
    const key = heldKey({ ...message, senderId: '' });
    const pending = this.downloading.get(key) ?? new Set<AbortController>();
    this.downloading.set(key, pending.add(stop));
    try {
      return await storeAttachments(
        incoming,
        dir,
        { maxBytes: limits.maxAttachmentBytes, maxCount: MAX_ATTACHMENTS, maxImagePixels: limits.maxImagePixels },
        { ...DOWNLOAD_RETRY, stop: stop.signal },
      );
    } finally {
      pending.delete(stop);
      if (pending.size === 0 && this.downloading.get(key) === pending) this.downloading.delete(key);
    }
  }

  /**
   * Whether a launch of `message`'s conversation is downloading its files now: a `/stop` or
   * `/cancel` then overtakes it (see overtaking.ts) instead of waiting behind it.
   */
  pending(message: InboundMessage): boolean {
    return this.downloading.has(heldKey({ ...message, senderId: '' }));
  }

  /** Ends every launch still downloading its files; @returns how many. */
  stop(): number {
    let stopped = 0;
    for (const pending of this.downloading.values()) {
      for (const stop of pending) {
        stop.abort(new BatonError('launch_stopped', STOPPED_WHILE_DOWNLOADING));
        stopped += 1;
      }
    }
    this.downloading.clear();
    return stopped;
  }
}
