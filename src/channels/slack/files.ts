/**
 * Files in and out on Slack: a shared file, fetched only when a launch asks for it, and a file
 * shared in a thread (`files.uploadV2`).
 */
import type { webApi } from '@slack/bolt';
import { slackForeignDownloadUrl, slackSignInRedirect } from '../../wording/channels.js';
import { AttachmentDownloadError, fetchDownload } from '../download.js';
import { ChannelSendError, type IncomingAttachment, type OutboundDocument } from '../types.js';
import { classifySlackError } from './errors.js';
import type { SlackFile } from './normalize.js';
import { escapeSlackText } from './text.js';

/** Where Slack serves `url_private_download`. */
const SLACK_FILES_ORIGIN = 'https://files.slack.com';

/** Largest file Slack takes, in bytes (docs.slack.dev "Uploading files": 1 GB). */
const SLACK_MAX_FILE_BYTES = 1024 * 1024 * 1024;

/**
 * A shared file, downloaded only when the dispatcher asks: a GET of its `url_private_download`
 * with the bot token (Slack "Downloading files": `Authorization: Bearer`, scope `files:read`).
 * The token goes only to Slack's file host (`files.slack.com`) or the configured API server's
 * origin (`apiUrl`); any other URL is refused.
 */
export function slackAttachment(
  file: SlackFile,
  token: string,
  apiUrl: string | undefined,
  secrets: readonly string[],
): IncomingAttachment {
  const name = file.name ?? file.id;
  return {
    name,
    sizeBytes: file.size,
    open: async (signal) => {
      const url = new URL(file.url_private_download ?? file.url_private ?? '');
      const own = apiUrl ? new URL(apiUrl).origin : undefined;
      if (url.origin !== SLACK_FILES_ORIGIN && url.origin !== own) {
        throw new AttachmentDownloadError(slackForeignDownloadUrl(SLACK_FILES_ORIGIN), { transient: false });
      }
      try {
        // Never followed: a redirect would carry the token elsewhere.
        return await fetchDownload(
          url,
          { headers: { authorization: `Bearer ${token}` }, redirect: 'manual', ...(signal ? { signal } : {}) },
          'Slack',
          (text) => redactAll(text, secrets),
        );
      } catch (err) {
        // Without files:read Slack answers with a redirect to its sign-in page, not the file.
        if (
          err instanceof AttachmentDownloadError &&
          err.status !== undefined &&
          err.status >= 300 &&
          err.status < 400
        ) {
          const { reason, fix } = slackSignInRedirect(err.status);
          throw new AttachmentDownloadError(reason, { transient: false, fix });
        }
        throw err;
      }
    },
  };
}

/**
 * Shares one file in the target's thread with `files.uploadV2` of @slack/web-api (it calls
 * `files.getUploadURLExternal`, uploads the bytes to the URL Slack answers, then
 * `files.completeUploadExternal` with `channel_id`, `thread_ts` and the caption as
 * `initial_comment`). Needs the `files:write` scope.
 *
 * @returns the file id (`F…`): the upload flow answers no message ts.
 * @throws ChannelSendError as {@link classifySlackError} maps Slack's answer; `refused` for a
 *   file over Slack's 1 GB limit.
 */
export async function sendSlackDocument(
  client: webApi.WebClient,
  document: OutboundDocument,
  secrets: readonly string[],
): Promise<{ messageId: string }> {
  // docs.slack.dev "Uploading files": files up to 1 GB.
  if (document.content.length > SLACK_MAX_FILE_BYTES) {
    throw new ChannelSendError(
      'refused',
      `Slack files.uploadV2: ${document.filename} is ${document.content.length} bytes, over Slack's 1 GB limit`,
    );
  }
  const threadTs = document.threadId ?? document.replyToMessageId;
  try {
    const base = {
      channel_id: document.chatId,
      file: document.content,
      filename: document.filename,
      title: document.filename,
      ...(document.caption ? { initial_comment: escapeSlackText(document.caption) } : {}),
    };
    const result = await client.filesUploadV2(threadTs ? { ...base, thread_ts: threadTs } : base);
    const id = (result.files as { files?: { id?: string }[] }[] | undefined)?.[0]?.files?.[0]?.id;
    if (!id) throw new Error('files.completeUploadExternal returned no file id');
    return { messageId: id };
  } catch (err) {
    throw classifySlackError(err, 'files.uploadV2', secrets);
  }
}

/** Every secret out of a text (the download's error names the URL and may echo a header). */
function redactAll(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret ? out.split(secret).join('[token]') : out), text);
}
