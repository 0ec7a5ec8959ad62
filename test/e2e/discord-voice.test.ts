/**
 * Discord voice messages through `baton start` with the real discord.js client: the owner's
 * voice message is downloaded from the fake CDN and transcribed by a fake OpenAI-compatible
 * endpoint, shown with Run and Edit, and Run launches it; a guest's is never downloaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { startFakeTranscription, type FakeTranscription } from '../fakes/fake-transcription.js';
import { WAIT_MS, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'fake.discord-bot-token.for-voice-tests';
const VOICE_KEY = 'sk-discord-voice-canary-key';
const OWNER = discordUser('100000000000000001', 'owner');
const GUEST = discordUser('100000000000000002', 'guest');
const OWNER_DM = '300000000000000001';
const GUEST_DM = '300000000000000002';
const AUDIO = Buffer.from('OggS\u0000fake discord voice message');

let world: ChatE2E;
let discord: FakeDiscord;
let voice: FakeTranscription;

const replyTo =
  (message: DiscordMessage) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;

beforeAll(async () => {
  voice = await startFakeTranscription({ key: VOICE_KEY });
  discord = await startFakeDiscord({ token: TOKEN });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id, guests: [GUEST.id] } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
    extraToml: ['[voice]', `url = ${JSON.stringify(voice.url)}`, 'model = "whisper-1"', 'key_env = "VOICE_KEY"'].join(
      '\n',
    ),
    dotEnv: { VOICE_KEY },
  });
});
afterAll(async () => {
  await world?.dispose();
  await discord?.close();
  await voice?.close();
});

const voiceMessage = (channelId: string, author: typeof OWNER) =>
  discord.pushMessage({
    channelId,
    author,
    content: '',
    attachments: [{ name: 'voice-message.ogg', bytes: AUDIO, contentType: 'audio/ogg', voiceSeconds: 2.5 }],
  });

/** The buttons of a sent message, as `label → custom_id`. */
const buttonsOf = (m: SentMessage): Record<string, string> =>
  Object.fromEntries(
    ((m.body.components ?? []) as { components?: { label: string; custom_id: string }[] }[])
      .flatMap((row) => row.components ?? [])
      .map((b) => [b.label, b.custom_id]),
  );

describe('Discord voice messages', () => {
  it('the owner’s voice message is transcribed, shown with Run and Edit, and Run launches it', async () => {
    voice.enqueue({ kind: 'text', text: 'codex: rename the helper' });
    const request = voiceMessage(OWNER_DM, OWNER);
    const confirm = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('I heard'),
      WAIT_MS,
    );
    expect(Object.keys(buttonsOf(confirm))).toEqual(['Run', 'Edit']);
    const sent = voice.requests.at(-1)!;
    expect(sent).toMatchObject({ status: 200, authorization: `Bearer ${VOICE_KEY}` });
    expect(sent.file).toMatchObject({ filename: 'voice-message.ogg' });
    expect(sent.file?.bytes.equals(AUDIO)).toBe(true);

    discord.press({ messageId: confirm.message.id, user: OWNER, customId: buttonsOf(confirm)['Run']! });
    const started = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    expect(started.message.content).toContain('🎙 codex: rename the helper');
  });

  it('a guest’s voice message is never downloaded nor sent', async () => {
    const before = { downloads: discord.attachmentDownloads.length, transcriptions: voice.requests.length };
    const request = voiceMessage(GUEST_DM, GUEST);
    const answer = await discord.waitForSent(replyTo(request), WAIT_MS);
    expect(answer.message.content).toBe('Voice notes are transcribed for the owner only.');
    expect({ downloads: discord.attachmentDownloads.length, transcriptions: voice.requests.length }).toEqual(before);
  });
});
