/**
 * Threads on Slack: the run a reply in a thread belongs to is named by this app's latest
 * `[run …]` message in it (`conversations.replies`).
 */
import type { webApi } from '@slack/bolt';
import type { Logger } from '../../core/logger.js';
import { describeSlackError } from './errors.js';
import type { SlackBotIdentity } from './normalize.js';
import { decodeSlackText } from './text.js';

/** Pages of `conversations.replies` read to find the thread's run message (200 messages a page). */
const MAX_THREAD_PAGES = 5;
const RUN_MESSAGE = /^\[run hr_[0-9a-f]{12}\]/;

/**
 * Text of this app's latest `[run …]` message in a thread, decoded, so a reply in a run's thread
 * finds its run. A failed lookup is logged and the message handled without it: commands in the
 * thread still work.
 */
export async function runMessageInThread(
  client: webApi.WebClient,
  bot: SlackBotIdentity,
  channel: string,
  threadTs: string,
  log: { logger: Logger; secrets: readonly string[] },
): Promise<string | undefined> {
  let latest: string | undefined;
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MAX_THREAD_PAGES; page++) {
      const result = await client.conversations.replies({
        channel,
        ts: threadTs,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      for (const reply of result.messages ?? []) {
        const mine = reply.user === bot.userId || reply.bot_id === bot.botId;
        const text = reply.text === undefined ? '' : decodeSlackText(reply.text);
        if (mine && RUN_MESSAGE.test(text)) latest = text;
      }
      cursor = result.response_metadata?.next_cursor || undefined;
      if (!result.has_more || !cursor) break;
    }
  } catch (err) {
    log.logger.warn(
      { channel: 'slack', err: describeSlackError(err, log.secrets) },
      'slack thread lookup failed; handling the message without it',
    );
  }
  return latest;
}
