/**
 * Discord end to end: the real discord.js client in `baton start` logs in through a fake REST API
 * (DISCORD_API_URL), reads the gateway URL from its `/gateway/bot`, and receives MESSAGE_CREATE
 * from the fake gateway; runs go to the fake codex. All on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUEST_REFUSAL } from '../../src/dispatch/trust.js';
import {
  INTENTS,
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'fake.discord-bot-token.for-tests-only';
const OWNER = discordUser('100000000000000001', 'owner');
const GUEST = discordUser('100000000000000002', 'guest');
const OTHER_BOT = discordUser('100000000000000003', 'otherbot', true);
const OWNER_DM = '300000000000000001';
const GUEST_DM = '300000000000000002';
const GUILD = '400000000000000001';
const GUILD_CHANNEL = '400000000000000002';

let world: ChatE2E;
let discord: FakeDiscord;

const replyTo =
  (message: DiscordMessage) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;
const dm = (text: string, replyToId?: string): DiscordMessage =>
  discord.pushMessage({
    channelId: OWNER_DM,
    author: OWNER,
    content: text,
    ...(replyToId ? { replyTo: replyToId } : {}),
  });

/** The owner's /help answered: every message pushed before it was handled. */
async function barrier(): Promise<void> {
  await discord.waitForSent(replyTo(dm('/help')), WAIT_MS);
}

beforeAll(async () => {
  discord = await startFakeDiscord({
    token: TOKEN,
    guilds: [{ id: GUILD, name: 'team', channelIds: [GUILD_CHANNEL] }],
  });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id, guests: [GUEST.id] } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
  });
});

afterAll(async () => {
  await world?.dispose();
  await discord?.close();
});

describe('Discord through discord.js', () => {
  let completed: SentMessage;
  let firstRunId: string;

  it('logs in through DISCORD_API_URL with the intents baton needs', () => {
    expect(world.service.stdout()).toMatch(/discord: connected/);
    expect(discord.sessions()).toBe(1);
    const { intents } = discord.identifies[0]!;
    for (const bit of [INTENTS.directMessages, INTENTS.guildMessages, INTENTS.messageContent])
      expect(intents & bit).toBe(bit);
    expect(world.service.stdout() + world.service.stderr()).not.toContain(TOKEN);
  });

  it('launches a run from an owner DM and answers with replies that ping nobody', async () => {
    const request = dm('/codex write the plan');
    const started = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    firstRunId = runIdOf(started.message.content);
    expect(started.message.content).toBe(`[run ${firstRunId}] started · codex · ${world.repo}`);
    expect(started.channelId).toBe(OWNER_DM);
    expect(started.body.allowed_mentions).toEqual({ parse: [], replied_user: true });
    completed = await discord.waitForSent(
      (m) => m.message.content.startsWith(`[run ${firstRunId}] completed`),
      WAIT_MS,
    );
    expect(replyTo(request)(completed)).toBe(true);
    expect(completed.message.content).toContain('done: write the plan');
  });

  it('ignores a guild message without a mention and answers one with <@id> or <@!id>, without a slash', async () => {
    const unaddressed = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: '/codex not for you',
    });
    const plain = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: `<@${discord.botUser.id}> whoami`,
    });
    const nick = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: GUEST,
      content: `<@!${discord.botUser.id}> codex delete everything`,
    });
    expect((await discord.waitForSent(replyTo(plain), WAIT_MS)).message.content).toContain(
      `Your discord user id: ${OWNER.id}`,
    );
    expect((await discord.waitForSent(replyTo(nick), WAIT_MS)).message.content).toBe(GUEST_REFUSAL);
    await barrier();
    expect(discord.sent.filter(replyTo(unaddressed))).toEqual([]);
  });

  it('ignores other bots and its own messages', async () => {
    const before = discord.sent.length;
    const fromBot = discord.pushMessage({ channelId: GUEST_DM, author: OTHER_BOT, content: '/codex loop' });
    await barrier();
    expect(discord.sent.filter(replyTo(fromBot))).toEqual([]);
    // Only the barrier's answer was sent: baton's own messages, echoed by the gateway, started nothing.
    expect(discord.sent.length).toBe(before + 1);
  });

  it('sends a 5000-character outcome as three messages, in order, each within 2000 characters', async () => {
    const request = dm('/codex long 5000');
    const started = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.message.content);
    await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] (3/3)`), WAIT_MS);
    const parts = discord.sent.filter(
      (m) => m.message.content.startsWith(`[run ${runId}]`) && !m.message.content.includes('] started'),
    );
    expect(parts.map((p) => p.message.content.split('\n')[0]!.replace(/ · .*/, ''))).toEqual([
      `[run ${runId}] completed`,
      `[run ${runId}] (2/3)`,
      `[run ${runId}] (3/3)`,
    ]);
    for (const part of parts) expect(part.message.content.length).toBeLessThanOrEqual(2000);
    expect(parts.every(replyTo(request))).toBe(true);
    const body = parts
      .map((p, i) =>
        i === 0 ? p.message.content.split('\n\n').slice(1).join('\n\n') : p.message.content.replace(/^[^\n]*\n/, ''),
      )
      .join('');
    expect(body.length).toBe(5000);
    expect(body).toMatch(/^line 0000 x+\nline 0001 /);
  });

  it('resumes the run when the owner replies to its message', async () => {
    const reply = dm('and the tests', completed.message.id);
    const started = await discord.waitForSent(
      (m) => replyTo(reply)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    const childId = runIdOf(started.message.content);
    expect(started.message.content).toBe(`[run ${childId}] started · codex · ${world.repo} · resuming ${firstRunId}`);
    const done = await discord.waitForSent((m) => m.message.content.startsWith(`[run ${childId}] completed`), WAIT_MS);
    expect(done.message.content).toMatch(/resumed fake-session-\S+: and the tests/);
  });
});
