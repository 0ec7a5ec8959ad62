/**
 * Discord passes the channel contract: discord.js (gateway and REST) against the fake Discord.
 */
import { DiscordAdapter } from '../../../src/channels/discord/adapter.js';
import { systemClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../../fakes/fake-discord.js';
import { EVERY_CAPABILITY, RATE_LIMIT_RETRY_AFTER_MS, type ChannelDriver, type SendFailure } from './driver.js';
import { describeChannelContract } from './suite.js';

const TOKEN = 'contract.discord-token.value';
const USERS = {
  owner: discordUser('100000000000000001', 'owner'),
  guest: discordUser('100000000000000002', 'guest'),
  stranger: discordUser('100000000000000003', 'stranger'),
} as const;
/** Each person's DM channel with the bot. */
const DMS = { owner: '300000000000000001', guest: '300000000000000002', stranger: '300000000000000003' } as const;

/**
 * Discord's answers for each failure. discord.js retries a 5xx three times itself, so Discord
 * being down is four 502s in a row; 50007 is "Cannot send messages to this user".
 */
const FAILURES: Record<SendFailure, { status: number; code?: number; retryAfterS?: number }[]> = {
  transient: [{ status: 502 }, { status: 502 }, { status: 502 }, { status: 502 }],
  permanent: [{ status: 403, code: 50007 }],
  rate_limited: [{ status: 429, retryAfterS: RATE_LIMIT_RETRY_AFTER_MS / 1000 }],
};

type Rows = { components: { custom_id: string; label: string }[] }[];
const buttonsOf = (body: Record<string, unknown>): { custom_id: string; label: string }[] =>
  ((body['components'] as Rows | undefined) ?? []).flatMap((r) => r.components);

function discordDriver(): ChannelDriver {
  let discord: FakeDiscord;
  let adapter: DiscordAdapter | undefined;

  return {
    platform: 'discord',
    capabilities: EVERY_CAPABILITY,
    trust: { owner: USERS.owner.id, guest: USERS.guest.id },
    startPlatform: async () => {
      discord = await startFakeDiscord({ token: TOKEN });
    },
    startAdapter: async ({ handler, presses, inbox }) => {
      adapter = new DiscordAdapter({
        token: TOKEN,
        apiUrl: discord.url,
        clock: systemClock,
        logger: silentLogger(),
        inbox,
        presses,
      });
      await adapter.start(handler);
      return adapter;
    },
    inject: async (from, text, file) => {
      const author = from === 'self' ? discord.botUser : USERS[from];
      const channelId = from === 'self' ? DMS.owner : DMS[from];
      const message = discord.pushMessage({
        channelId,
        author,
        content: text,
        ...(file ? { attachments: [file] } : {}),
      });
      // discord.js drops a MESSAGE_CREATE of a message its cache holds before baton sees it; a
      // redelivery shows that the end result stays one answer whichever layer catches it.
      return { messageId: message.id, redeliver: async () => discord.redeliverMessage(message) };
    },
    ownerTarget: () => ({ platform: 'discord', chatId: DMS.owner }),
    sent: () =>
      discord.sent.map((m) => ({
        messageId: m.message.id,
        text: m.message.content,
        replyTo: (m.body['message_reference'] as { message_id?: string } | undefined)?.message_id,
        buttons: buttonsOf(m.body).map((b) => b.label),
      })),
    documents: () => discord.sent.flatMap((m) => m.files),
    edits: () => discord.edits.map((e) => ({ messageId: e.messageId, text: String(e.body['content'] ?? '') })),
    press: async (messageId, label, from) => {
      const sent = discord.sent.find((m) => m.message.id === messageId);
      const button = sent ? buttonsOf(sent.body).find((b) => b.label === label) : undefined;
      if (!button) throw new Error(`no button ${label} under message ${messageId}`);
      const interaction = discord.press({ messageId, user: USERS[from], customId: button.custom_id });
      return { redeliver: async () => discord.dispatchInteraction(interaction) };
    },
    pressAnswers: () =>
      discord.interactionReplies.filter((r) => r.kind === 'followup').map((r) => String(r.body['content'] ?? '')),
    failNextSend: (failure) => {
      for (const one of FAILURES[failure]) discord.failNext(DMS.owner, one);
    },
    stop: async () => {
      await adapter?.stop();
      await discord?.close();
    },
  };
}

describeChannelContract(discordDriver);
