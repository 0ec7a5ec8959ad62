/**
 * Discord inbound across a crash (issue #10 item 2), through `baton start` and the real discord.js
 * client: a message the service received, and was handling when it was killed with SIGKILL, is
 * answered after the restart, once. Discord itself never delivers it again (a new gateway
 * session does not replay what an old one received), so only baton's inbox can answer it.
 *
 * The kill point is observed, not timed: the owner's `/codex` carries Discord's automatic
 * `message.txt` (a long paste), which is read before the command is handled; the fake CDN holds
 * that download, and the kill comes once the fake has seen it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'fake.discord-bot-token.for-inbox-tests';
const OWNER = discordUser('100000000000000011', 'owner');
const OWNER_DM = '300000000000000011';

let world: ChatE2E;
let discord: FakeDiscord;

const replyTo =
  (message: DiscordMessage) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
  });
});
afterAll(async () => {
  await world?.dispose();
  await discord?.close();
});

describe('Discord inbox across kill -9', () => {
  it('answers a message the killed service had received but not handled, once', async () => {
    await waitFor(() => discord.sessions() === 1, { what: 'the gateway session', timeoutMs: WAIT_MS, intervalMs: 50 });
    discord.faultDownloads({ holdMs: 60_000 });
    const request = discord.pushMessage({
      channelId: OWNER_DM,
      author: OWNER,
      content: '/codex',
      attachments: [
        { name: 'message.txt', bytes: Buffer.from('fix the inbox crash'), contentType: 'text/plain; charset=utf-8' },
      ],
    });
    await waitFor(() => discord.attachmentDownloads.length === 1, {
      what: 'the message.txt download',
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });

    await world.crashAndRestart();

    const started = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.message.content);
    const done = await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.message.content).toContain('fix the inbox crash');
    // Anything else the restarted service answers comes after it; the request got one run.
    const marker = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: '/help' });
    await discord.waitForSent(replyTo(marker), WAIT_MS);
    expect(discord.sent.filter((m) => replyTo(request)(m) && m.message.content.includes('] started'))).toHaveLength(1);
  });
});
