/**
 * Buttons on Discord (issue #14 item 2) through `baton start`: the `started` message carries a
 * Stop button (message component); a press arrives as INTERACTION_CREATE over the gateway and is
 * acknowledged with a deferred update within Discord's 3 s, then answered with an ephemeral
 * follow-up. A guest's press changes nothing and is answered "owner only"; the owner's stops the
 * run and leaves no process; the same interaction delivered twice is acted on once. Runs go to the
 * fake codex (`hang` works until stopped).
 */
import { readFileSync } from 'node:fs';
import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MessageFlags } from 'discord.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { serviceStatePath } from '../../src/service/control-api/service-state.js';
import { discordUser, startFakeDiscord, type FakeDiscord, type SentMessage } from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'fake.discord-bot-token.for-buttons';
const OWNER = discordUser('100000000000000001', 'owner');
const GUEST = discordUser('100000000000000002', 'guest');
const GUILD = '400000000000000001';
const GUILD_CHANNEL = '400000000000000002';

let world: ChatE2E;
let discord: FakeDiscord;

const replyTo =
  (message: { id: string }) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;

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

describe('Discord buttons through discord.js interactions', () => {
  it('Stop under started: a guest is told "owner only", the owner stops the run once, no process is left', async () => {
    const request = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: `<@${discord.botUser.id}> codex hang`,
    });
    const started = await discord.waitForSent(
      (m) =>
        m.channelId === GUILD_CHANNEL &&
        m.message.content.includes('] started') &&
        (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id,
      WAIT_MS,
    );
    const runId = runIdOf(started.message.content);
    expect(started.body.components).toEqual([
      { type: 1, components: [{ type: 2, custom_id: `baton:stop:${runId}`, label: 'Stop', style: 4 }] },
    ]);
    await waitFor(async () => (await findRunProcesses(runId)).length > 0, {
      what: 'the run process',
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });

    const guestPress = discord.press({ messageId: started.message.id, user: GUEST, customId: `baton:stop:${runId}` });
    await waitFor(
      () => discord.interactionReplies.some((r) => r.interactionId === guestPress.id && r.kind === 'followup'),
      { what: 'the answer to the guest', timeoutMs: WAIT_MS, intervalMs: 50 },
    );
    const guestReplies = discord.interactionReplies.filter((r) => r.interactionId === guestPress.id);
    expect(guestReplies.map((r) => r.kind)).toEqual(['callback', 'followup']);
    expect(guestReplies[0]!.body.type).toBe(6);
    expect(guestReplies[1]!.body).toMatchObject({
      content: 'Only the owner can use these buttons.',
      flags: MessageFlags.Ephemeral,
    });
    expect((await findRunProcesses(runId)).length).toBeGreaterThan(0);

    const press = discord.press({ messageId: started.message.id, user: OWNER, customId: `baton:stop:${runId}` });
    discord.dispatchInteraction(press);
    await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    await waitFor(() => discord.interactionReplies.some((r) => r.interactionId === press.id && r.kind === 'followup'), {
      what: 'the answer to the owner',
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });
    expect(
      discord.interactionReplies.find((r) => r.interactionId === press.id && r.kind === 'followup')!.body.content,
    ).toMatch(/^Stop(ped\.| requested)/);
    await waitFor(async () => (await findRunProcesses(runId)).length === 0, {
      what: 'no process of the run',
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });
    // A barrier: a later command is answered, so the duplicate was handled by then.
    const later = discord.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: `<@${discord.botUser.id}> /help`,
    });
    await discord.waitForSent(
      (m) => (m.body.message_reference as { message_id?: string } | undefined)?.message_id === later.id,
      WAIT_MS,
    );
    expect(
      discord.interactionReplies.filter((r) => r.interactionId === press.id && r.kind === 'followup'),
    ).toHaveLength(1);
    expect(discord.sent.filter((m) => m.message.content.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
  });

  it(
    'a press received before a crash is acted on after the restart, once; the same interaction again acts on nothing',
    async () => {
      // A reply Discord refuses for good (403 Missing Permissions) is dead-lettered at once.
      discord.failNext(GUILD_CHANNEL, { status: 403, code: 50013 });
      const whoami = discord.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: OWNER,
        content: `<@${discord.botUser.id}> /whoami`,
      });
      const runs = discord.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: OWNER,
        content: `<@${discord.botUser.id}> /runs`,
      });
      const list = await discord.waitForSent((m) => replyTo(runs)(m), WAIT_MS);
      const button = (list.body.components as { components: { custom_id: string; label: string }[] }[])
        .flatMap((r) => r.components)
        .find((c) => c.label.startsWith('Redeliver #'));
      expect(button).toBeDefined();
      const letter = button!.label.slice('Redeliver '.length);

      // The service stores the press, then waits for Discord to take its acknowledgement; it is
      // killed there, before acting on the press.
      discord.holdNextInteractionCallback();
      const press = discord.press({ messageId: list.message.id, user: OWNER, customId: button!.custom_id });
      await waitFor(
        () => discord.interactionReplies.some((r) => r.interactionId === press.id && r.kind === 'callback'),
        { what: 'the acknowledgement of the press', timeoutMs: WAIT_MS, intervalMs: 50 },
      );
      await world.crashAndRestart();

      await discord.waitForSent(
        (m) => replyTo(whoami)(m) && m.message.content.startsWith('Your discord user id'),
        WAIT_MS,
      );
      await waitFor(
        () => discord.interactionReplies.some((r) => r.interactionId === press.id && r.kind === 'followup'),
        { what: 'the answer to the press', timeoutMs: WAIT_MS, intervalMs: 50 },
      );
      expect(
        discord.interactionReplies.find((r) => r.interactionId === press.id && r.kind === 'followup')!.body.content,
      ).toBe(`${letter} sent again.`);

      discord.dispatchInteraction(press);
      const later = discord.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: OWNER,
        content: `<@${discord.botUser.id}> /help`,
      });
      await discord.waitForSent((m) => replyTo(later)(m), WAIT_MS);
      expect(
        discord.interactionReplies.filter((r) => r.interactionId === press.id && r.kind === 'followup'),
      ).toHaveLength(1);
      expect(discord.sent.filter((m) => replyTo(whoami)(m))).toHaveLength(1);
    },
    4 * WAIT_MS,
  );
});

/** The service's `service.json` ({@link serviceStatePath}), or undefined when absent. */
function readServiceStateSync(batonHome: string): { pid: number; port: number } | undefined {
  try {
    return JSON.parse(readFileSync(serviceStatePath(batonHome), 'utf8')) as { pid: number; port: number };
  } catch {
    return undefined;
  }
}

/** The buttons under a sent message, as `label → custom_id`. */
function buttonsOf(m: SentMessage): Record<string, string> {
  const rows = (m.body.components as { components: { custom_id: string; label: string }[] }[] | undefined) ?? [];
  return Object.fromEntries(rows.flatMap((r) => r.components).map((c) => [c.label, c.custom_id]));
}

describe('tool approvals and buttons on Discord (the real claude)', () => {
  let claudeWorld: ChatE2E;
  let anthropic: FakeAnthropic;
  let chat: FakeDiscord;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    chat = await startFakeDiscord({
      token: `${TOKEN}.claude`,
      guilds: [{ id: GUILD, name: 'team', channelIds: [GUILD_CHANNEL] }],
    });
    claudeWorld = await startChatE2E({
      trust: { discord: { owner: OWNER.id, guests: [GUEST.id] } },
      env: { DISCORD_BOT_TOKEN: `${TOKEN}.claude`, DISCORD_API_URL: chat.url },
      claude: { binDir: inject('claudeBinDir'), anthropicUrl: anthropic.url },
      // A run waiting for an approval is silent: after a minute it gets the watchdog advisory.
      harnessToml: 'inactivity_minutes = 1',
    });
  });
  afterAll(async () => {
    await claudeWorld?.dispose();
    await chat?.close();
    await anthropic?.close();
  });

  /** Presses `label` under `m` as `user`; resolves with the ephemeral answer. */
  async function pressOn(m: SentMessage, label: string, user = OWNER): Promise<string> {
    const customId = buttonsOf(m)[label];
    if (!customId) throw new Error(`no button ${label} under ${JSON.stringify(m.message.content)}`);
    const press = chat.press({ messageId: m.message.id, user, customId });
    await waitFor(() => chat.interactionReplies.some((r) => r.interactionId === press.id && r.kind === 'followup'), {
      what: `the answer to ${label}`,
      timeoutMs: WAIT_MS,
      intervalMs: 50,
    });
    return String(
      chat.interactionReplies.find((r) => r.interactionId === press.id && r.kind === 'followup')!.body.content,
    );
  }

  const mention = (text: string) =>
    chat.pushMessage({
      channelId: GUILD_CHANNEL,
      guildId: GUILD,
      author: OWNER,
      content: `<@${chat.botUser.id}> ${text}`,
    });

  it(
    'an approval run replayed from the inbox after a restart asks; a long command is cut with the whole of it as a file; Allow runs it',
    async () => {
      await waitFor(() => chat.sessions() === 1, { what: 'the gateway session', timeoutMs: WAIT_MS, intervalMs: 50 });
      const longArg = 'b'.repeat(2_500);
      const command = `printf '%s' ${longArg} > allowed.txt`;
      anthropic.enqueue(
        { kind: 'tool_use', name: 'Bash', input: { command } },
        { kind: 'message', text: 'Wrote allowed.txt.' },
      );
      // The task comes as Discord's message.txt (a long paste), read before the command is handled:
      // the fake CDN holds it, and the service is killed once the fake has seen the download.
      chat.faultDownloads({ holdMs: 60_000 });
      const request = chat.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: OWNER,
        content: `<@${chat.botUser.id}> /claude approve`,
        attachments: [
          { name: 'message.txt', bytes: Buffer.from('write the file'), contentType: 'text/plain; charset=utf-8' },
        ],
      });
      await waitFor(() => chat.attachmentDownloads.length === 1, {
        what: 'the message.txt download',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });
      // The restarted service replays the stored message as it connects; the run's
      // permission-prompt server must reach the service's HTTP port then, so the port is open (and
      // recorded in service.json) before the gateway session starts.
      const recordedAtIdentify: (number | undefined)[] = [];
      chat.onIdentify(() => {
        const state = readServiceStateSync(claudeWorld.batonHome);
        recordedAtIdentify.push(state?.pid);
      });
      await claudeWorld.crashAndRestart();
      await waitFor(() => recordedAtIdentify.length > 0, {
        what: 'the gateway session of the restarted service',
        timeoutMs: WAIT_MS,
        intervalMs: 50,
      });
      expect(recordedAtIdentify).toEqual([claudeWorld.service.pid]);
      const started = await chat.waitForSent(
        (m) => replyTo(request)(m) && m.message.content.includes('] started'),
        3 * WAIT_MS,
      );
      const runId = runIdOf(started.message.content);
      const ask = await chat.waitForSent(
        (m) => m.message.content.startsWith(`[run ${runId}] claude asks to use Bash`),
        3 * WAIT_MS,
      );
      expect(ask.message.content.length).toBeLessThanOrEqual(2000);
      expect(ask.message.content).toMatch(
        /\n… \(\d+ more characters; the whole input follows as approval-\d+\.txt\)\n/,
      );
      expect(Object.keys(buttonsOf(ask))).toEqual(['Allow', 'Allow for this run', 'Deny']);
      const file = await chat.waitForSent((m) => m.files.some((f) => /^approval-\d+\.txt$/.test(f.filename)), WAIT_MS);
      expect(file.files[0]!.content.toString('utf8')).toBe(`$ ${command}`);
      expect(file.message.content).toBe(`[run ${runId}] The whole input of this tool call: ${file.files[0]!.filename}`);

      expect(await pressOn(ask, 'Allow', GUEST)).toBe('Only the owner can use these buttons.');
      expect(await pressOn(ask, 'Allow')).toBe('Allowed.');
      const done = await chat.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] completed`), WAIT_MS);
      expect(done.message.content).not.toContain('denied');
      expect(await readFile(join(claudeWorld.repo, 'allowed.txt'), 'utf8')).toBe(longArg);
    },
    6 * WAIT_MS,
  );

  it(
    '+30 min under the watchdog advisory moves the deadline; Stop under started stops the run',
    async () => {
      anthropic.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'touch slow.txt' } });
      const request = mention('/claude approve timeout:30 create slow.txt');
      const started = await chat.waitForSent(
        (m) => replyTo(request)(m) && m.message.content.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.message.content);
      await chat.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
      const advisory = await chat.waitForSent(
        (m) => m.message.content.startsWith(`[run ${runId}] No output from claude for 1m 00s`),
        3 * WAIT_MS,
      );
      expect(Object.keys(buttonsOf(advisory))).toEqual(['Keep waiting', '+30 min', 'Stop']);
      expect(await pressOn(advisory, '+30 min', GUEST)).toBe('Only the owner can use these buttons.');
      expect(await pressOn(advisory, '+30 min')).toBe('Wall clock now 60 minutes (at most 240).');
      const view = mention(`/runs ${runId}`);
      expect((await chat.waitForSent((m) => replyTo(view)(m), WAIT_MS)).message.content).toContain('timeout: 60 min');
      // The advisory has decided and lost its buttons; the Stop under `started` still stops.
      expect(await pressOn(started, 'Stop')).toMatch(/^Stop(ped\.| requested)/);
      await chat.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      expect(
        await access(join(claudeWorld.repo, 'slow.txt')).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    },
    6 * WAIT_MS,
  );

  it(
    'a failed run with a session carries Resume, which resumes it',
    async () => {
      anthropic.enqueue({ kind: 'http_error', status: 401 });
      const request = mention('/claude this will fail');
      const started = await chat.waitForSent(
        (m) => replyTo(request)(m) && m.message.content.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.message.content);
      const failed = await chat.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] failed`), WAIT_MS);
      expect(Object.keys(buttonsOf(failed))).toEqual(['Resume']);
      anthropic.enqueue({ kind: 'message', text: 'Picked it up again.' });
      const first = await pressOn(failed, 'Resume');
      expect(first).toMatch(/^Resuming as hr_[0-9a-f]{12}\.$/);
      // The message's Resume gave way to what it did: Discord has no button left to press.
      await expect(pressOn(failed, 'Resume')).rejects.toThrow(/has no button baton:resume/);
      const edit = chat.edits.find((e) => e.messageId === failed.message.id);
      expect(String(edit?.body['content'])).toMatch(
        new RegExp(`^\\[run ${runId}\\] failed[\\s\\S]*\\n\\n✓ ${first.replace(/\./g, '\\.')}$`),
      );
      expect(edit?.body['components']).toEqual([]);
      const resumed = await chat.waitForSent(
        (m) => m.message.content.includes('] started · claude · ') && m.message.content.endsWith(`resuming ${runId}`),
        WAIT_MS,
      );
      const done = await chat.waitForSent(
        (m) => m.message.content.startsWith(`[run ${runIdOf(resumed.message.content)}] completed`),
        WAIT_MS,
      );
      expect(done.message.content).toContain('Picked it up again.');
      expect(chat.sent.filter((m) => m.message.content.endsWith(`resuming ${runId}`))).toHaveLength(1);
    },
    4 * WAIT_MS,
  );
});
