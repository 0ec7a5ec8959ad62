/**
 * Discord attachments (issue #13) through `baton start` with the real discord.js client: the
 * automatic `message.txt` of a long paste is the rest of the message, a screenshot goes with the
 * task, a guest's files are never downloaded. Runs go to the fake codex, which answers with what it
 * was given.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUEST_REFUSAL } from '../../src/dispatch/trust.js';
import {
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'fake.discord-bot-token.for-attachment-tests';
const OWNER = discordUser('100000000000000001', 'owner');
const GUEST = discordUser('100000000000000002', 'guest');
const OWNER_DM = '300000000000000001';
const GUEST_DM = '300000000000000002';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let world: ChatE2E;
let discord: FakeDiscord;

const replyTo =
  (message: DiscordMessage) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id, guests: [GUEST.id] } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
  });
});
afterAll(async () => {
  await world?.dispose();
  await discord?.close();
});

async function outcomeOf(request: DiscordMessage): Promise<{ runId: string; text: string }> {
  const started = await discord.waitForSent(
    (m) => replyTo(request)(m) && m.message.content.includes('] started'),
    WAIT_MS,
  );
  const runId = runIdOf(started.message.content);
  const done = await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] completed`), WAIT_MS);
  return { runId, text: done.message.content };
}

describe('Discord attachments', () => {
  it('the message.txt of a long paste is the task, not "/codex needs a task"', async () => {
    const pasted = `fix this crash:\n${'a long pasted stack trace line\n'.repeat(200)}`;
    const request = discord.pushMessage({
      channelId: OWNER_DM,
      author: OWNER,
      content: '/codex',
      attachments: [{ name: 'message.txt', bytes: Buffer.from(pasted), contentType: 'text/plain; charset=utf-8' }],
    });
    const { runId } = await outcomeOf(request);
    expect(await readFile(join(world.batonHome, 'harness', 'runs', runId, 'prompt.md'), 'utf8')).toBe(pasted.trim());
  });

  it('a screenshot goes with the task as an image', async () => {
    const request = discord.pushMessage({
      channelId: OWNER_DM,
      author: OWNER,
      content: '/codex argv fix what the screenshot shows',
      attachments: [{ name: 'shot.png', bytes: PNG, contentType: 'image/png' }],
    });
    const { text } = await outcomeOf(request);
    expect(text).toContain('done: argv fix what the screenshot shows [images: 1-shot.png]');
  });

  it('a guest’s files are never downloaded', async () => {
    const before = discord.attachmentDownloads.length;
    const request = discord.pushMessage({
      channelId: GUEST_DM,
      author: GUEST,
      content: '/codex',
      attachments: [{ name: 'message.txt', bytes: Buffer.from('do things') }],
    });
    const answer = await discord.waitForSent(replyTo(request), WAIT_MS);
    expect(answer.message.content).toBe(GUEST_REFUSAL);
    expect(discord.attachmentDownloads.length).toBe(before);
  });
});
