/**
 * Files named on the terminal (`baton ask --file`) as attachments of a task.
 */
import { open } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { IncomingAttachment } from '../types.js';

/**
 * A local file as an attachment: an image the model sees, or a text file made part of the task
 * (`harness/attachments.ts` decides from its content). Its name is the file's base name.
 *
 * @param path the file, absolute or relative to this process's working directory.
 * @throws Error from `open()` when the file cannot be read (the launch then refuses, naming it).
 */
export function localAttachment(path: string): IncomingAttachment {
  return {
    name: basename(path),
    open: async () => (await open(resolve(path), 'r')).createReadStream(),
  };
}
