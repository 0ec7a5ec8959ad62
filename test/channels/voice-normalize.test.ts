/** Voice notes as each adapter normalizes them: the owner's audio is offered as `voice`, with its length and type. */
import type { Update } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import {
  discordInboxPayload,
  normalizeDiscordMessage,
  type DiscordMessageLike,
} from '../../src/channels/discord/normalize.js';
import { normalizeSlackEvent, type SlackEventEnvelope } from '../../src/channels/slack/normalize.js';
import { normalizeTelegramUpdate } from '../../src/channels/telegram/normalize.js';
import type { IncomingAttachment } from '../../src/channels/types.js';

const at = new Date('2026-12-04T09:00:00Z');
const attach = (file: {
  name: string;
  size?: number | undefined;
  sizeBytes?: number | undefined;
}): IncomingAttachment => ({
  name: file.name,
  sizeBytes: file.sizeBytes ?? file.size,
  open: () => Promise.reject(new Error('not downloaded in this test')),
});

describe('voice notes, normalized', () => {
  it('Telegram: a voice message without caption is a message with an empty text and its voice', () => {
    const update = {
      update_id: 1,
      message: {
        message_id: 7,
        date: 0,
        chat: { id: 5, type: 'private', first_name: 'o' },
        from: { id: 5, is_bot: false, first_name: 'o' },
        voice: { file_id: 'F', file_unique_id: 'U', duration: 12, mime_type: 'audio/ogg', file_size: 900 },
      },
    } as Update;
    const message = normalizeTelegramUpdate(update, { id: 1, username: 'bot' }, at, (f) => attach(f))!;
    expect(message.text).toBe('');
    expect(message.attachments).toBeUndefined();
    expect(message.voice).toMatchObject({
      name: 'voice-7.ogg',
      sizeBytes: 900,
      durationSeconds: 12,
      mimeType: 'audio/ogg',
    });
    // Without a way to download, no voice is offered (and a bare voice note is no message).
    expect(normalizeTelegramUpdate(update, { id: 1, username: 'bot' }, at)).toBeUndefined();
  });

  it('Slack: an audio clip is the voice, other files stay files', () => {
    const envelope = (files: NonNullable<SlackEventEnvelope['event']['files']>): SlackEventEnvelope => ({
      event_id: 'Ev1',
      event: { type: 'message', channel_type: 'im', channel: 'D1', user: 'U1', text: '', ts: '1.000100', files },
    });
    const clip = normalizeSlackEvent(
      envelope([
        {
          id: 'F1',
          name: 'Audio Clip.webm',
          size: 50,
          subtype: 'slack_audio',
          mimetype: 'audio/webm',
          duration_ms: 4100,
        },
      ]),
      { userId: 'UBOT', botId: 'BBOT' },
      at,
      (f) => attach({ name: f.name ?? f.id, size: f.size }),
    )!;
    expect(clip.voice).toMatchObject({ name: 'Audio Clip.webm', durationSeconds: 5, mimeType: 'audio/webm' });
    expect(clip.attachments).toBeUndefined();
    const file = normalizeSlackEvent(
      envelope([{ id: 'F2', name: 'notes.txt', size: 5, mimetype: 'text/plain' }]),
      { userId: 'UBOT', botId: 'BBOT' },
      at,
      (f) => attach({ name: f.name ?? f.id, size: f.size }),
    )!;
    expect(file.voice).toBeUndefined();
    expect(file.attachments).toHaveLength(1);
  });

  it('Discord: a voice message (audio with a duration) is the voice, and survives the inbox', () => {
    const message: DiscordMessageLike = {
      id: '5',
      channelId: '3',
      guildId: null,
      content: '',
      webhookId: null,
      system: false,
      author: { id: '1', bot: false, username: 'o', globalName: null },
      reference: null,
      attachments: [
        { url: 'http://cdn/v.ogg', name: 'voice-message.ogg', size: 80, contentType: 'audio/ogg', duration: 2.2 },
      ],
    };
    const live = normalizeDiscordMessage(message, '9', undefined, at, attach)!;
    expect(live.voice).toMatchObject({ name: 'voice-message.ogg', durationSeconds: 3, mimeType: 'audio/ogg' });
    expect(live.attachments).toBeUndefined();
    // A restarted process reads the message back from the inbox's JSON.
    const stored = JSON.parse(JSON.stringify(discordInboxPayload(message, undefined))) as ReturnType<
      typeof discordInboxPayload
    >;
    expect(normalizeDiscordMessage(stored.message, '9', undefined, at, attach)!.voice).toMatchObject({
      durationSeconds: 3,
    });
    // An uploaded audio file has no duration: it is a file.
    const upload = normalizeDiscordMessage(
      { ...message, attachments: [{ url: 'http://cdn/a.mp3', name: 'a.mp3', size: 80, contentType: 'audio/mpeg' }] },
      '9',
      undefined,
      at,
      attach,
    )!;
    expect(upload.voice).toBeUndefined();
    expect(upload.attachments).toHaveLength(1);
  });
});
