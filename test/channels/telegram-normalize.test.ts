import { describe, expect, it } from 'vitest';
import type { Update } from 'grammy/types';
import { normalizeTelegramUpdate } from '../../src/channels/telegram/normalize.js';

const bot = { id: 42, username: 'baton_bot' };
const at = new Date('2026-11-29T09:00:00Z');

function update(message: Record<string, unknown>): Update {
  return {
    update_id: 7,
    message: {
      message_id: 100,
      date: 0,
      chat: { id: 5, type: 'private' },
      from: { id: 5, is_bot: false, first_name: 'Ann', last_name: 'Lee' },
      text: '/help',
      ...message,
    },
  } as Update;
}

describe('normalizeTelegramUpdate', () => {
  it('maps a private message', () => {
    expect(normalizeTelegramUpdate(update({}), bot, at)).toEqual({
      platform: 'telegram',
      dedupeKey: '42:7',
      chatId: '5',
      isDirect: true,
      messageId: '100',
      senderId: '5',
      senderName: 'Ann Lee',
      senderIsBot: false,
      text: '/help',
      receivedAt: at,
    });
  });

  it('marks a forwarded message (forward_origin, or the older forward_date) as somebody else’s words', () => {
    const origin = { type: 'user', date: 1, sender_user: { id: 9, is_bot: false, first_name: 'Eve' } };
    expect(normalizeTelegramUpdate(update({ text: '/codex do it', forward_origin: origin }), bot, at)?.forwarded).toBe(
      true,
    );
    expect(
      normalizeTelegramUpdate(
        update({ text: '/codex do it', forward_date: 1, forward_from: origin.sender_user }),
        bot,
        at,
      )?.forwarded,
    ).toBe(true);
    expect(normalizeTelegramUpdate(update({ text: '/codex do it' }), bot, at)?.forwarded).toBeUndefined();
  });

  it('strips this bot name from a command and drops commands for other bots', () => {
    expect(normalizeTelegramUpdate(update({ text: '/codex@Baton_Bot fix it' }), bot, at)?.text).toBe('/codex fix it');
    expect(normalizeTelegramUpdate(update({ text: '/codex@other_bot fix it' }), bot, at)).toBeUndefined();
  });

  it('marks a message that names this bot as addressed to it, without the name', () => {
    const group = { chat: { id: -5, type: 'supergroup', title: 'team' } };
    const named = normalizeTelegramUpdate(update({ ...group, text: '@Baton_Bot fix the test, please' }), bot, at);
    expect(named).toMatchObject({ mentioned: true, text: 'fix the test, please', isDirect: false });
    const inside = normalizeTelegramUpdate(update({ ...group, text: 'hey @baton_bot: look' }), bot, at);
    expect(inside).toMatchObject({ mentioned: true, text: 'hey : look' });
    const other = normalizeTelegramUpdate(update({ ...group, text: 'ask @baton_botany or mail a@baton_bot' }), bot, at);
    expect(other?.mentioned).toBeUndefined();
    expect(other?.text).toBe('ask @baton_botany or mail a@baton_bot');
  });

  it('keeps the text of a replied-to message only when this bot sent it', () => {
    const mine = normalizeTelegramUpdate(
      update({
        text: 'go on',
        reply_to_message: { message_id: 90, from: { id: 42, is_bot: true }, text: '[run hr_0123456789ab] completed' },
      }),
      bot,
      at,
    );
    expect(mine).toMatchObject({ replyToMessageId: '90', replyToBotText: '[run hr_0123456789ab] completed' });
    const theirs = normalizeTelegramUpdate(
      update({
        text: 'go on',
        reply_to_message: { message_id: 91, from: { id: 9, is_bot: false }, text: '[run hr_0123456789ab] fake' },
      }),
      bot,
      at,
    );
    expect(theirs?.replyToMessageId).toBe('91');
    expect(theirs?.replyToBotText).toBeUndefined();
  });

  it('does not treat a forum topic message as a reply to the topic root', () => {
    const msg = normalizeTelegramUpdate(
      update({
        chat: { id: -10, type: 'supergroup', is_forum: true },
        is_topic_message: true,
        message_thread_id: 55,
        reply_to_message: { message_id: 55 },
      }),
      bot,
      at,
    );
    expect(msg).toMatchObject({ threadId: '55', isDirect: false });
    expect(msg?.replyToMessageId).toBeUndefined();
  });

  it('flags other bots and ignores non-text messages', () => {
    expect(
      normalizeTelegramUpdate(update({ from: { id: 9, is_bot: true, first_name: 'b' } }), bot, at)?.senderIsBot,
    ).toBe(true);
    expect(normalizeTelegramUpdate(update({ text: undefined, photo: [] }), bot, at)).toBeUndefined();
  });
});
