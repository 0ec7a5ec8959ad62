/**
 * Buttons on Discord (issue #14 item 2) through `baton start`: the `started` message carries a
 * Stop button (message component); a press arrives as INTERACTION_CREATE over the gateway and is
 * acknowledged with a deferred update within Discord's 3 s, then answered with an ephemeral
 * follow-up. A guest's press changes nothing and is answered "owner only"; the owner's stops the
 * run and leaves no process; the same interaction delivered twice is acted on once. Runs go to the
 * fake codex (`hang` works until stopped).
 */
import { MessageFlags } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'fake.discord-bot-token.for-buttons';
const OWNER = discordUser('100000000000000001', 'owner');
const GUEST = discordUser('100000000000000002', 'guest');
const GUILD = '400000000000000001';
const GUILD_CHANNEL = '400000000000000002';

let world: ChatE2E;
let discord: FakeDiscord;

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let waited = 0; !(await condition()); waited += 50) {
    if (waited > WAIT_MS) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN, guilds: [{ id: GUILD, name: 'team', channelIds: [GUILD_CHANNEL] }] });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id, guests: [GUEST.id] } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
  });
});

afterAll(async () => {
  await world?.dispose();
  await discord?.close();
});

describe('Discord buttons through discord.js interactions', () => {
  it('Stop under started: a guest is told "owner only", the owner stops the run once, no process is left', async () => {
    const request = discord.pushMessage({ channelId: GUILD_CHANNEL, guildId: GUILD, author: OWNER, content: `<@${discord.botUser.id}> codex hang` });
    const started = await discord.waitForSent((m) => m.channelId === GUILD_CHANNEL && m.message.content.includes('] started') && (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id, WAIT_MS);
    const runId = runIdOf(started.message.content);
    expect(started.body.components).toEqual([{ type: 1, components: [{ type: 2, custom_id: `baton:stop:${runId}`, label: 'Stop', style: 4 }] }]);
    await until(async () => (await findRunProcesses(runId)).length > 0, 'the run process');

    const guestPress = discord.press({ messageId: started.message.id, user: GUEST, customId: `baton:stop:${runId}` });
    await until(() => discord.interactionReplies.some((r) => r.interactionId === guestPress.id && r.kind === 'followup'), 'the answer to the guest');
    const guestReplies = discord.interactionReplies.filter((r) => r.interactionId === guestPress.id);
    expect(guestReplies.map((r) => r.kind)).toEqual(['callback', 'followup']);
    expect(guestReplies[0]!.body.type).toBe(6);
    expect(guestReplies[0]!.afterMs).toBeLessThan(3_000);
    expect(guestReplies[1]!.body).toMatchObject({ content: 'Only the owner can use these buttons.', flags: MessageFlags.Ephemeral });
    expect((await findRunProcesses(runId)).length).toBeGreaterThan(0);

    const press = discord.press({ messageId: started.message.id, user: OWNER, customId: `baton:stop:${runId}` });
    discord.dispatchInteraction(press);
    await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    await until(() => discord.interactionReplies.some((r) => r.interactionId === press.id && r.kind === 'followup'), 'the answer to the owner');
    expect(discord.interactionReplies.find((r) => r.interactionId === press.id && r.kind === 'followup')!.body.content).toMatch(/^Stop(ped\.| requested)/);
    await until(async () => (await findRunProcesses(runId)).length === 0, 'no process of the run');
    // A barrier: a later command is answered, so the duplicate was handled by then.
    const later = discord.pushMessage({ channelId: GUILD_CHANNEL, guildId: GUILD, author: OWNER, content: `<@${discord.botUser.id}> /help` });
    await discord.waitForSent((m) => (m.body.message_reference as { message_id?: string } | undefined)?.message_id === later.id, WAIT_MS);
    expect(discord.interactionReplies.filter((r) => r.interactionId === press.id && r.kind === 'followup')).toHaveLength(1);
    expect(discord.sent.filter((m) => m.message.content.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
  });
});
