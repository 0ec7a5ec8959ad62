/**
 * The Discord adapter against the fake Discord, in process: login through the REST URL and the
 * gateway it names, messages handed over normalized, send failures mapped to the outbox's
 * kinds, a refused token never echoed, and status transitions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAdapter } from '../../src/channels/discord/adapter.js';
import { ChannelSendError, type InboundMessage } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';

const TOKEN = 'unit.discord-token.value';
const DM = '300000000000000009';
const OWNER = discordUser('100000000000000001', 'owner');

let discord: FakeDiscord;
let adapter: DiscordAdapter;
const received: InboundMessage[] = [];

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN });
  adapter = new DiscordAdapter({ token: TOKEN, apiUrl: discord.url, clock: systemClock, logger: silentLogger() });
  await adapter.start(async (message) => {
    received.push(message);
  });
});

afterAll(async () => {
  await adapter?.stop();
  await discord?.close();
});

async function sendError(text = 'hello'): Promise<ChannelSendError> {
  const error = await adapter.send({ chatId: DM, text }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ChannelSendError);
  return error as ChannelSendError;
}

describe('DiscordAdapter', () => {
  it('logs in and reports connected', () => {
    expect(adapter.status()).toEqual({ state: 'connected' });
    expect(adapter.maxMessageLength).toBe(2000);
    expect(discord.sessions()).toBe(1);
  });

  it('hands a DM to the handler, then its own reply (echoed by the gateway) marked as a bot', async () => {
    const request = discord.pushMessage({ channelId: DM, author: OWNER, content: '/runs' });
    await expect.poll(() => received.length, { timeout: 5_000 }).toBe(1);
    expect(received[0]).toMatchObject({
      platform: 'discord',
      dedupeKey: request.id,
      chatId: DM,
      isDirect: true,
      senderIsBot: false,
      text: '/runs',
    });
    const { messageId } = await adapter.send({ chatId: DM, replyToMessageId: request.id, text: 'ok @everyone' });
    const sent = discord.sent.at(-1)!;
    expect(sent.message.id).toBe(messageId);
    expect(sent.body).toEqual({
      content: 'ok @everyone',
      allowed_mentions: { parse: [], replied_user: true },
      flags: 4,
      message_reference: { message_id: request.id, fail_if_not_exists: false },
    });
    await expect.poll(() => received.length, { timeout: 5_000 }).toBe(2);
    expect(received[1]).toMatchObject({ dedupeKey: messageId, senderIsBot: true });
  });

  it('maps a long 429 to rate_limited with retry_after in ms', async () => {
    discord.failNext(DM, { status: 429, retryAfterS: 30 });
    const error = await sendError();
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true });
    expect(error.retryAfterMs).toBeGreaterThanOrEqual(30_000);
  });

  it('maps an over-long message to malformed and a refusal to refused', async () => {
    expect(await sendError('x'.repeat(2001))).toMatchObject({ kind: 'malformed', retryable: false });
    discord.failNext(DM, { status: 403, code: 50007 });
    expect(await sendError()).toMatchObject({ kind: 'refused', retryable: false });
  });

  it('reports reconnecting while the gateway connection is lost, then connected again', async () => {
    const states: string[] = [];
    const watch = setInterval(() => states.push(adapter.status().state), 5);
    try {
      discord.dropConnections(4000);
      await expect.poll(() => states.includes('reconnecting'), { timeout: 10_000 }).toBe(true);
      await expect.poll(() => adapter.status().state, { timeout: 15_000 }).toBe('connected');
      expect(discord.sessions()).toBe(1);
    } finally {
      clearInterval(watch);
    }
  });

  it('fails to start on a refused token, never quoting it', async () => {
    const wrong = new DiscordAdapter({
      token: 'wrong.discord-token.value',
      apiUrl: discord.url,
      clock: systemClock,
      logger: silentLogger(),
      readyTimeoutMs: 5_000,
    });
    const error = await wrong
      .start(async () => {})
      .then(
        () => undefined,
        (err: unknown) => err as ChannelSendError,
      );
    expect(error).toBeInstanceOf(ChannelSendError);
    expect(error).toMatchObject({
      kind: 'refused',
      message: 'Discord login: the REST API refused DISCORD_BOT_TOKEN (401); check the token',
    });
    expect(error?.message).not.toContain('wrong.discord-token.value');
    expect(wrong.status()).toMatchObject({ state: 'failed' });
  });

  it('fails to start when the Message Content intent is not enabled, saying where to enable it', async () => {
    const strict = await startFakeDiscord({ token: TOKEN, messageContentAllowed: false });
    const blocked = new DiscordAdapter({
      token: TOKEN,
      apiUrl: strict.url,
      clock: systemClock,
      logger: silentLogger(),
      readyTimeoutMs: 10_000,
    });
    try {
      const error = await blocked
        .start(async () => {})
        .then(
          () => undefined,
          (err: unknown) => err as ChannelSendError,
        );
      expect(error).toBeInstanceOf(ChannelSendError);
      expect(error?.message).toMatch(/Message Content Intent/);
      expect(blocked.status()).toMatchObject({ state: 'failed' });
    } finally {
      await blocked.stop();
      await strict.close();
    }
  });

  it('reports stopped after stop and closes the gateway session', async () => {
    await adapter.stop();
    expect(adapter.status()).toEqual({ state: 'stopped' });
    await expect.poll(() => discord.sessions(), { timeout: 5_000 }).toBe(0);
  });
});
