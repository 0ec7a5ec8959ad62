/**
 * A long paste a chat client turned into a file (Discord's `message.txt`) is the rest of the
 * message: its text joins the message text before the command is read.
 */
import { AttachmentDownloadError } from '../../channels/download.js';
import type { IncomingAttachment, InboundMessage } from '../../channels/types.js';
import { withDownloadDeadlines } from '../../core/download-deadline.js';
import { safeErrorMessage, type Logger } from '../../core/logger.js';
import { decodeUtf8, MAX_TEXT_ATTACHMENT_BYTES, withDownloadRetry } from '../../harness/attachments.js';

/** The text of a pasted-text file, or undefined when it is over 1 MiB or not UTF-8. */
export async function readPastedText(attachment: IncomingAttachment): Promise<string | undefined> {
  // A transient failure is retried like any attachment download.
  return withDownloadRetry(attachment.name, () =>
    withDownloadDeadlines(attachment, async (source) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      try {
        for await (const chunk of source) {
          bytes += (chunk as Buffer).length;
          if (bytes > MAX_TEXT_ATTACHMENT_BYTES) return undefined;
          chunks.push(chunk as Buffer);
        }
      } catch (err) {
        throw new AttachmentDownloadError(`the download was cut off (${safeErrorMessage(err)})`, {
          transient: true,
          cause: err,
        });
      }
      return decodeUtf8(Buffer.concat(chunks));
    }),
  );
}

/**
 * `message` with the text of its pasted-text files joined to its text. One that cannot be read
 * as UTF-8 text of at most 1 MiB stays an attachment, which the launch then accepts or refuses
 * with a reason. Never throws for a file that cannot be read (it is logged).
 */
export async function joinPastedText(message: InboundMessage, logger: Logger): Promise<InboundMessage> {
  let text = message.text;
  const rest: IncomingAttachment[] = [];
  for (const attachment of message.attachments ?? []) {
    const pasted = attachment.pastedText
      ? await readPastedText(attachment).catch((err: unknown) => {
          logger.warn({ err, platform: message.platform }, 'could not read a pasted-text file; it stays an attachment');
          return undefined;
        })
      : undefined;
    if (pasted === undefined) rest.push(attachment);
    else text = text.trim() === '' ? pasted : `${text}\n${pasted}`;
  }
  const { attachments: _replaced, ...others } = message;
  return { ...others, text, ...(rest.length > 0 ? { attachments: rest } : {}) };
}
