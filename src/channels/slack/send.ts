/**
 * Sending and editing Slack messages (`chat.postMessage`, `chat.update`): escaped text in the
 * target's thread, links not unfurled, baton's buttons as Block Kit.
 */
import type { webApi } from '@slack/bolt';
import type { MessageEdit, OutboundMessage } from '../types.js';
import { slackBlocks } from './buttons.js';
import { classifySlackError } from './errors.js';
import { slackText } from './text.js';

/**
 * Longest text of one message, in UTF-16 code units, before escaping. `chat.postMessage` advises
 * at most 4,000 characters in `text` and answers `msg_too_long` past its real limit.
 */
export const SLACK_MAX_MESSAGE_LENGTH = 4000;

/**
 * Posts one message, escaped, in the target's thread (`thread_ts`), links not unfurled. With
 * buttons the message also carries Block Kit `blocks` (see {@link slackBlocks}); `text` stays,
 * for notifications.
 *
 * @throws ChannelSendError as {@link classifySlackError} maps Slack's answer.
 */
export async function sendSlackMessage(
  client: webApi.WebClient,
  message: OutboundMessage,
  secrets: readonly string[],
): Promise<{ messageId: string }> {
  const threadTs = message.threadId ?? message.replyToMessageId;
  const format = message.format ?? 'plain';
  try {
    const sent = await client.chat.postMessage({
      channel: message.chatId,
      text: slackText(message.text, format),
      // A plain text stays plain: no *bold*/_italic_ from user content. Either way the text is
      // escaped, which keeps out mentions.
      mrkdwn: format === 'markdown',
      unfurl_links: false,
      unfurl_media: false,
      ...(message.buttons?.length ? { blocks: slackBlocks(message.text, message.buttons, format) } : {}),
      ...(threadTs ? { thread_ts: threadTs } : {}),
    });
    if (!sent.ts) throw new Error('chat.postMessage returned no ts');
    return { messageId: sent.ts };
  } catch (err) {
    throw classifySlackError(err, 'chat.postMessage', secrets);
  }
}

/**
 * `chat.update` of a message the bot posted (`channel` + `ts`), escaped and plain as sent. Slack
 * accepts an unchanged text, so there is no "not modified" case; a 429 is thrown with its
 * `Retry-After` (the client rejects rate-limited calls instead of waiting).
 *
 * @throws ChannelSendError as {@link classifySlackError} maps Slack's answer.
 */
export async function editSlackMessage(
  client: webApi.WebClient,
  edit: MessageEdit,
  secrets: readonly string[],
): Promise<void> {
  try {
    // chat.update has no `mrkdwn` argument (ChatUpdateArguments, @slack/web-api 7); the text is
    // escaped as for posting, so user content still cannot mention anyone.
    // chat.update keeps a message's previous blocks when none are given: an edit always sends its
    // own, so the shown text follows the edit and the buttons go when the edit has none.
    const format = edit.format ?? 'plain';
    await client.chat.update({
      channel: edit.chatId,
      ts: edit.messageId,
      text: slackText(edit.text, format),
      blocks: slackBlocks(edit.text, edit.buttons ?? [], format),
    });
  } catch (err) {
    throw classifySlackError(err, 'chat.update', secrets);
  }
}
