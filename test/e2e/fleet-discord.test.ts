/**
 * One Discord gateway session per bot token across a fleet (issue #16 item 2): two `baton start`
 * nodes on one PostgreSQL database against the fake Discord gateway. A second session would
 * receive every message again; with the lease only one node identifies, the other stands by, and
 * after a kill -9 of the holder the standby opens the session and answers.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { startService, type ServiceProcess } from '../support/service.js';

const TOKEN = 'fake.discord-bot-token.for-fleet-tests';
const OWNER = discordUser('100000000000000001', 'owner');
const OWNER_DM = '300000000000000001';
const WAIT_MS = 60_000;
const onPostgres = Boolean(process.env.DATABASE_URL);

describe.runIf(onPostgres)('Discord in a fleet', () => {
  let discord: FakeDiscord;
  let world: ChatE2E;
  let standby: ServiceProcess | undefined;

  beforeAll(async () => {
    discord = await startFakeDiscord({ token: TOKEN, guilds: [] });
    world = await startChatE2E({
      trust: { discord: { owner: OWNER.id } },
      env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
    });
    const home = join(world.dir, 'baton-home-2');
    await mkdir(home, { recursive: true });
    const config = await readFile(join(world.batonHome, 'config.toml'), 'utf8');
    await writeFile(join(home, 'config.toml'), `${config}\n[node]\nname = "second"\n`);
    standby = await startService({ ...(await serviceEnv(world)), BATON_HOME: home });
  }, 240_000);

  afterAll(async () => {
    await standby?.stop();
    await world?.dispose();
    await discord?.close();
  });

  const replyTo =
    (message: DiscordMessage) =>
    (m: SentMessage): boolean =>
      (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;

  it('one gateway session; after a kill -9 of its holder the standby takes it and answers', async () => {
    expect(discord.sessions()).toBe(1);
    expect(standby!.stdout()).toMatch(/discord: standby/);
    const first = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: '/whoami' });
    await discord.waitForSent(replyTo(first), WAIT_MS);
    // The standby connects once the holder's lease has expired. Discord dispatches a message to a
    // session right after its READY: the user's next message arrives the moment the standby's
    // session opens, and must be answered (not dropped while the node is still starting up).
    let pushed: DiscordMessage | undefined;
    let opened = false;
    discord.onIdentify(() => {
      if (opened) return;
      opened = true;
      setImmediate(() => (pushed = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: '/whoami' })));
    });
    await world.service.kill();
    for (let i = 0; i < 1_200 && !pushed; i++) await sleep(100);
    expect(pushed, 'the standby never opened a gateway session').toBeDefined();
    const second = pushed!;
    expect(discord.sessions()).toBe(1);
    const answer = await discord.waitForSent(replyTo(second), WAIT_MS);
    expect(answer.message.content).toContain(OWNER.id);
    expect(discord.sent.filter(replyTo(first))).toHaveLength(1);
    expect(discord.identifies.length).toBe(2);
  }, 180_000);
});

/** The environment `baton start` got in {@link startChatE2E}, read back from its /proc entry. */
async function serviceEnv(world: ChatE2E): Promise<Record<string, string>> {
  const raw = await readFile(`/proc/${world.service.pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}
