/**
 * A Discord button press while the database stalls (PostgreSQL behind a TCP proxy that holds what
 * baton sends): Discord wants the interaction response within 3 s, so the acknowledgement may not
 * wait for the inbox write. The press is acknowledged (deferred update) while the database still
 * holds, and acted on once it answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'fake.discord-bot-token.for-press-stall';
const OWNER = discordUser('100000000000000001', 'owner');
const GUILD = '400000000000000001';
const GUILD_CHANNEL = '400000000000000002';
/** Longer than Discord's 3 s for an interaction response. */
const STALL_MS = 10_000;
const onPostgres = Boolean(process.env.DATABASE_URL);

let world: ChatE2E;
let discord: FakeDiscord;
let proxy: TcpProxy;

beforeAll(async () => {
  if (!onPostgres) return;
  const server = new URL(process.env.DATABASE_URL!);
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
  discord = await startFakeDiscord({
    token: TOKEN,
    guilds: [{ id: GUILD, name: 'team', channelIds: [GUILD_CHANNEL] }],
  });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
    adjustEnv: (env) => ({ ...env, DATABASE_URL: proxy.rewrite(env.DATABASE_URL!) }),
  });
});

afterAll(async () => {
  await world?.dispose();
  await discord?.close();
  await proxy?.close();
});

describe.runIf(onPostgres)('a Discord button press during a database stall', () => {
  it('is acknowledged before the database answers, and acted on after', async () => {
    const request = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: `<@${discord.botUser.id}> codex hang`,
    });
    const started = await discord.waitForSent(
      (m) =>
        (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id &&
        m.message.content.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.message.content);
    const release = proxy.hold();
    let released = false;
    // Released after the stall at the latest, so a late acknowledgement cannot hang the test.
    const fallback = setTimeout(() => {
      released = true;
      release();
    }, STALL_MS);
    const press = discord.press({ messageId: started.message.id, user: OWNER, customId: `baton:stop:${runId}` });
    const replyOf = (kind: 'callback' | 'followup') =>
      discord.interactionReplies.find((r) => r.interactionId === press.id && r.kind === kind);
    await waitFor(() => replyOf('callback') !== undefined, {
      what: 'the acknowledgement of the press',
      timeoutMs: WAIT_MS,
      intervalMs: 10,
    });
    const ackedDuringStall = !released;
    clearTimeout(fallback);
    release();
    expect(ackedDuringStall).toBe(true);
    expect(replyOf('callback')!.body.type).toBe(6);
    await waitFor(() => replyOf('followup') !== undefined, {
      what: 'the answer to the press',
      timeoutMs: WAIT_MS,
      intervalMs: 10,
    });
    expect(String(replyOf('followup')!.body.content)).toMatch(
      /^(Stop(ped\.| requested)|That run has already finished)/,
    );
    await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
  }, 120_000);
});
