import { describe, expect, it } from 'vitest';
import {
  compareSlackEnvelopes,
  normalizeSlackEvent,
  needsThreadLookup,
  type SlackMessageEvent,
} from '../../src/channels/slack/normalize.js';
import { decodeSlackText, escapeSlackText, stripBotMention } from '../../src/channels/slack/text.js';

const bot = { userId: 'UBOT', botId: 'BBOT' };
const at = new Date('2026-11-29T09:00:00Z');

/** Shaped like the `app_mention` example of the Slack API docs ("app_mention event"). */
function mention(fields: Partial<SlackMessageEvent> = {}) {
  return {
    event_id: 'Ev123ABC456',
    event: {
      type: 'app_mention',
      user: 'U061F7AUR',
      text: '<@UBOT> /codex fix the test',
      ts: '1515449522.000016',
      channel: 'C123ABC456',
      ...fields,
    },
  };
}

describe('normalizeSlackEvent', () => {
  it('maps a channel mention: dedupe by the message (channel:ts, not event_id), thread = its own ts, mention stripped', () => {
    expect(normalizeSlackEvent(mention(), bot, at)).toEqual({
      platform: 'slack',
      dedupeKey: 'C123ABC456:1515449522.000016',
      chatId: 'C123ABC456',
      isDirect: false,
      threadId: '1515449522.000016',
      topLevel: true,
      mentioned: true,
      messageId: '1515449522.000016',
      senderId: 'U061F7AUR',
      senderName: 'U061F7AUR',
      senderIsBot: false,
      text: '/codex fix the test',
      receivedAt: at,
    });
  });

  it('gives every event carrying one message the same dedupe key (a retry, or another event id)', () => {
    const first = normalizeSlackEvent(mention(), bot, at)!;
    const other = normalizeSlackEvent({ ...mention(), event_id: 'Ev999OTHER' }, bot, at)!;
    expect(other.dedupeKey).toBe(first.dedupeKey);
    expect(normalizeSlackEvent(mention({ ts: '1515449522.000017' }), bot, at)!.dedupeKey).not.toBe(first.dedupeKey);
  });

  it('orders stored envelopes by message ts, exactly (16 digits)', () => {
    const at_ = (ts: string) => ({ event_id: ts, event: { type: 'app_mention', channel: 'C1', ts } });
    const sorted = [at_('1515449522.000017'), at_('1515449522.000016'), at_('999999999.999999')]
      .sort(compareSlackEnvelopes)
      .map((e) => e.event.ts);
    expect(sorted).toEqual(['999999999.999999', '1515449522.000016', '1515449522.000017']);
  });

  it('replies in the thread of a threaded mention and names its parent', () => {
    const message = normalizeSlackEvent(mention({ ts: '1515449600.000100', thread_ts: '1515449522.000016' }), bot, at);
    expect(message).toMatchObject({ threadId: '1515449522.000016', replyToMessageId: '1515449522.000016' });
    expect(needsThreadLookup(message!)).toBe(true);
  });

  it('takes direct messages (message.im) and nothing else of type message', () => {
    const im = {
      event_id: 'Ev2',
      event: { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: 'whoami', ts: '1.000001' },
    };
    expect(normalizeSlackEvent(im, bot, at)).toMatchObject({
      isDirect: true,
      chatId: 'D1',
      text: 'whoami',
      threadId: '1.000001',
    });
    expect(normalizeSlackEvent({ ...im, event: { ...im.event, channel_type: 'channel' } }, bot, at)).toBeUndefined();
  });

  it('drops edits, deletions and joins; marks bots, including itself', () => {
    expect(normalizeSlackEvent(mention({ subtype: 'message_changed' }), bot, at)).toBeUndefined();
    expect(normalizeSlackEvent(mention({ subtype: 'channel_join' }), bot, at)).toBeUndefined();
    expect(
      normalizeSlackEvent(mention({ user: undefined, bot_id: 'B9', subtype: 'bot_message' }), bot, at),
    ).toMatchObject({ senderId: 'B9', senderIsBot: true });
    expect(normalizeSlackEvent(mention({ user: 'UBOT' }), bot, at)?.senderIsBot).toBe(true);
  });

  it('looks a thread up only for a person writing inside a thread', () => {
    expect(needsThreadLookup(normalizeSlackEvent(mention({ thread_ts: '1515449522.000016' }), bot, at)!)).toBe(false);
    expect(needsThreadLookup(normalizeSlackEvent(mention(), bot, at)!)).toBe(false);
    const fromBot = mention({ ts: '2.0', thread_ts: '1.0', bot_id: 'B9' });
    expect(needsThreadLookup(normalizeSlackEvent(fromBot, bot, at)!)).toBe(false);
  });
});

describe('Slack text', () => {
  it('strips every mention of this bot, labelled or not, and no other', () => {
    expect(stripBotMention('<@UBOT> codex go', 'UBOT')).toBe('codex go');
    expect(stripBotMention('hey <@UBOT|baton>   codex <@UOTHER>', 'UBOT')).toBe('hey codex <@UOTHER>');
  });

  it('decodes what people typed: entities, special mentions, users, channels, links', () => {
    expect(decodeSlackText('a &lt;b&gt; &amp;lt; c')).toBe('a <b> &lt; c');
    expect(decodeSlackText('<!channel> <!here> <!everyone> <!subteam^S1|@devs>')).toBe(
      '@channel @here @everyone @devs',
    );
    expect(decodeSlackText('<@U1|ann> <@U2> <#C1|general> <#C2>')).toBe('@ann @U2 #general #C2');
    expect(decodeSlackText('see <https://x.dev/a?b=1&amp;c=2> and <http://x.dev|x.dev> or <https://y.dev|docs>')).toBe(
      'see https://x.dev/a?b=1&c=2 and x.dev or docs (https://y.dev)',
    );
  });

  it('escapes &, < and > (and nothing else), so text can never form markup', () => {
    expect(escapeSlackText('<!channel> @everyone *b* _i_ <b>&amp;')).toBe(
      '&lt;!channel&gt; @everyone *b* _i_ &lt;b&gt;&amp;amp;',
    );
    const hostile = '<!here> & <https://evil|click> &gt;';
    expect(decodeSlackText(escapeSlackText(hostile))).toBe(hostile);
  });
});
