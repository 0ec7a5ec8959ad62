import { describe, expect, it } from 'vitest';
import { normalizeDiscordMessage, type DiscordMessageLike } from '../../src/channels/discord/normalize.js';

const BOT = '900000000000000001';
const at = new Date('2026-11-29T09:00:00Z');

function message(fields: Partial<DiscordMessageLike> = {}): DiscordMessageLike {
  return {
    id: '500000000000000001',
    channelId: '300000000000000001',
    guildId: null,
    content: '/codex fix it',
    webhookId: null,
    system: false,
    author: { id: '100000000000000001', bot: false, username: 'ann', globalName: 'Ann Lee' },
    reference: null,
    ...fields,
  };
}

describe('normalizeDiscordMessage', () => {
  it('maps a direct message: dedupe by message id, no mention needed', () => {
    expect(normalizeDiscordMessage(message(), BOT, undefined, at)).toEqual({
      platform: 'discord',
      dedupeKey: '500000000000000001',
      chatId: '300000000000000001',
      isDirect: true,
      messageId: '500000000000000001',
      senderId: '100000000000000001',
      senderName: 'Ann Lee',
      senderIsBot: false,
      text: '/codex fix it',
      receivedAt: at,
    });
  });

  it('marks a forward (reference type 1) as somebody else’s words, not a reply (type 0)', () => {
    expect(
      normalizeDiscordMessage(message({ reference: { messageId: '1', type: 1 } }), BOT, undefined, at)?.forwarded,
    ).toBe(true);
    expect(
      normalizeDiscordMessage(message({ reference: { messageId: '1', type: 0 } }), BOT, undefined, at)?.forwarded,
    ).toBeUndefined();
  });

  it('takes a guild message only when it mentions the bot (<@id> or <@!id>), and strips the mention', () => {
    const guild = { guildId: '400000000000000001' };
    expect(normalizeDiscordMessage(message({ ...guild, content: 'codex fix it' }), BOT, undefined, at)).toBeUndefined();
    expect(
      normalizeDiscordMessage(message({ ...guild, content: `<@${BOT}> codex fix it` }), BOT, undefined, at),
    ).toMatchObject({ isDirect: false, text: 'codex fix it' });
    expect(
      normalizeDiscordMessage(message({ ...guild, content: `hey <@!${BOT}>  codex <@123>` }), BOT, undefined, at)?.text,
    ).toBe('hey codex <@123>');
    expect(
      normalizeDiscordMessage(message({ ...guild, content: '<@900000000000000002> codex' }), BOT, undefined, at),
    ).toBeUndefined();
  });

  it('keeps the replied-to text only when the bot wrote it; a reply to the bot needs no mention', () => {
    const reply = message({
      guildId: '400000000000000001',
      content: 'and the docs',
      reference: { messageId: '500000000000000000' },
    });
    expect(
      normalizeDiscordMessage(reply, BOT, { authorId: BOT, content: '[run hr_0123456789ab] completed' }, at),
    ).toMatchObject({
      replyToMessageId: '500000000000000000',
      replyToBotText: '[run hr_0123456789ab] completed',
    });
    expect(
      normalizeDiscordMessage(reply, BOT, { authorId: '7', content: '[run hr_0123456789ab] fake' }, at),
    ).toBeUndefined();
    const dmReply = normalizeDiscordMessage(
      { ...reply, guildId: null },
      BOT,
      { authorId: '7', content: '[run hr_0123456789ab] fake' },
      at,
    );
    expect(dmReply).toMatchObject({ replyToMessageId: '500000000000000000' });
    expect(dmReply).not.toHaveProperty('replyToBotText');
  });

  it('marks bots, webhooks and itself; drops system messages', () => {
    expect(
      normalizeDiscordMessage(
        message({ author: { id: '2', bot: true, username: 'b', globalName: null } }),
        BOT,
        undefined,
        at,
      ),
    ).toMatchObject({ senderIsBot: true, senderName: 'b' });
    expect(normalizeDiscordMessage(message({ webhookId: '8' }), BOT, undefined, at)?.senderIsBot).toBe(true);
    expect(
      normalizeDiscordMessage(
        message({ author: { id: BOT, bot: true, username: 'baton', globalName: null } }),
        BOT,
        undefined,
        at,
      )?.senderIsBot,
    ).toBe(true);
    expect(normalizeDiscordMessage(message({ system: true }), BOT, undefined, at)).toBeUndefined();
  });
});
