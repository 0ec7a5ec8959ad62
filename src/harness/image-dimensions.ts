/**
 * An image's width and height read from its header, without decoding it: a few hundred bytes of
 * PNG can announce 20000×20000 pixels, which a CLI then decodes into a gigabyte of memory.
 * The header parsers are image-size's (one handler per format, fed a bounded buffer).
 */
import { open } from 'node:fs/promises';
import { GIF } from 'image-size/types/gif';
import { JPG } from 'image-size/types/jpg';
import { PNG } from 'image-size/types/png';
import { WEBP } from 'image-size/types/webp';

/** An image the model sees as an image. Media types Anthropic's Messages API and codex accept. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/**
 * Bytes of the file the header is looked for in. A JPEG's size marker comes after its metadata
 * segments (EXIF, ICC profile, thumbnails), which can together run to a few hundred KiB.
 */
export const IMAGE_HEADER_MAX_BYTES = 4 * 1024 * 1024;

/** Width and height in pixels. */
export interface ImageDimensions {
  width: number;
  height: number;
}

const HANDLERS = { 'image/png': PNG, 'image/jpeg': JPG, 'image/gif': GIF, 'image/webp': WEBP } as const;

/**
 * The dimensions `head` announces for an image of type `mediaType` (as sniffed from its magic
 * bytes), or undefined when the header is cut, malformed, or gives a width or height of 0.
 *
 * @param head the file's first bytes (at most {@link IMAGE_HEADER_MAX_BYTES} are needed).
 */
export function imageDimensions(head: Uint8Array, mediaType: ImageMediaType): ImageDimensions | undefined {
  const handler = HANDLERS[mediaType];
  try {
    if (!handler.validate(head)) return undefined;
    const { width, height } = handler.calculate(head);
    if (!Number.isSafeInteger(width) || !Number.isSafeInteger(height) || width <= 0 || height <= 0) return undefined;
    return { width, height };
  } catch {
    // image-size throws on a header it cannot follow (a cut file, a marker past the buffer).
    return undefined;
  }
}

/** {@link imageDimensions} of the file at `path`, reading at most {@link IMAGE_HEADER_MAX_BYTES}. */
export async function readImageDimensions(
  path: string,
  mediaType: ImageMediaType,
): Promise<ImageDimensions | undefined> {
  const handle = await open(path, 'r');
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(Math.min(size, IMAGE_HEADER_MAX_BYTES));
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return imageDimensions(head.subarray(0, bytesRead), mediaType);
  } finally {
    await handle.close();
  }
}
