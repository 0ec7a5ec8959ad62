/**
 * The Slack adapter against the fake Slack, in process: send failures mapped to the outbox's
 * kinds, a refused token never echoed, Socket Mode (apps.connections.open → WebSocket → hello →
 * events_api acknowledged) delivering a normalized message, and status transitions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../src/channels/slack/adapter.js';
import { slackChannel } from '../../src/channels/slack/factory.js';
import { ChannelSendError, type InboundMessage } from '../../src/channels/types.js';
import { parseEnv } from '../../src/config/index.js';
import { channelEnv } from '../../src/wiring/channels.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';

const TOKEN = 'xoxb-unitfake';
const APP_TOKEN = 'xapp-unit-test-app-token';

let slack: FakeSlack;
let adapter: SlackAdapter;
const received: InboundMessage[] = [];

beforeAll(async () => {
  slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
  adapter = new SlackAdapter({
    token: TOKEN,
    transport: { kind: 'socket', appToken: APP_TOKEN },
    apiUrl: slack.url,
    clock: systemClock,
    logger: silentLogger(),
  });
  await adapter.start(async (message) => {
    received.push(message);
  });
});

afterAll(async () => {
  await adapter?.stop();
  await slack?.close();
});

async function sendError(text = 'hello'): Promise<ChannelSendError> {
  const error = await adapter.send({ chatId: 'C1', text }).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ChannelSendError);
  return error as ChannelSendError;
}

describe('SlackAdapter', () => {
  it('connects over Socket Mode with the app token and reports connected', () => {
    expect(adapter.status()).toEqual({ state: 'connected' });
    expect(adapter.maxMessageLength).toBe(4000);
    expect(slack.sockets()).toBe(1);
    expect(slack.calls.map((c) => c.method)).toEqual(['auth.test', 'apps.connections.open']);
  });

  it('hands a Socket Mode events_api envelope to the handler, acknowledged', async () => {
    const envelope = slack.userMessage({ kind: 'im', channel: 'D1', user: 'U1', text: '/runs' });
    await slack.deliverSocket(envelope, 5_000);
    await expect.poll(() => received.length, { timeout: 5_000 }).toBe(1);
    expect(received[0]).toMatchObject({
      platform: 'slack',
      dedupeKey: `D1:${envelope.event.ts}`,
      chatId: 'D1',
      isDirect: true,
      text: '/runs',
    });
  });

  it('posts escaped plain text in the thread and returns its ts', async () => {
    const { messageId } = await adapter.send({ chatId: 'C1', threadId: '1.000100', text: 'a <b> & c' });
    const posted = slack.posted.at(-1)!;
    expect(posted.message.ts).toBe(messageId);
    expect(posted.args).toMatchObject({
      channel: 'C1',
      thread_ts: '1.000100',
      text: 'a &lt;b&gt; &amp; c',
      mrkdwn: 'false',
      unfurl_links: 'false',
    });
  });

  it('maps a 429 to rate_limited with Retry-After in ms', async () => {
    slack.failNext('chat.postMessage', { status: 429, retryAfterS: 42 });
    expect(await sendError()).toMatchObject({ kind: 'rate_limited', retryAfterMs: 42_000, retryable: true });
  });

  it('maps msg_too_long to malformed and a missing channel to refused', async () => {
    expect(await sendError('x'.repeat(4001))).toMatchObject({ kind: 'malformed', retryable: false });
    slack.failNext('chat.postMessage', { error: 'channel_not_found' });
    expect(await sendError()).toMatchObject({ kind: 'refused', message: 'Slack chat.postMessage: channel_not_found' });
  });

  it('fails to start on a refused token, saying why, never quoting the token', async () => {
    const wrong = 'xoxb-wrongfak';
    const refused = new SlackAdapter({
      token: wrong,
      transport: { kind: 'http', signingSecret: 'unit-test-signing-secret', port: 1 },
      apiUrl: slack.url,
      clock: systemClock,
      logger: silentLogger(),
    });
    const error = await refused
      .start(async () => {})
      .then(
        () => undefined,
        (err: unknown) => err as ChannelSendError,
      );
    expect(error).toMatchObject({ kind: 'refused', message: 'Slack start: invalid_auth' });
    expect(refused.status()).toEqual({ state: 'failed', reason: 'Slack start: invalid_auth' });
  });

  it('reports an unreachable API as a network failure without the token', async () => {
    const offline = new SlackAdapter({
      token: TOKEN,
      transport: { kind: 'http', signingSecret: 'unit-test-signing-secret', port: 1 },
      apiUrl: 'http://127.0.0.1:9/api/',
      clock: systemClock,
      logger: silentLogger(),
    });
    const error = await offline.send({ chatId: 'C1', text: 'x' }).then(
      () => undefined,
      (err: unknown) => err as ChannelSendError,
    );
    expect(error?.kind).toBe('network');
    expect(error?.message).not.toContain(TOKEN);
  });

  it('reports reconnecting when the Socket Mode connection drops, then connected again', async () => {
    const states: string[] = [];
    const watch = setInterval(() => states.push(adapter.status().state), 5);
    try {
      slack.dropSockets();
      await expect.poll(() => states.includes('reconnecting'), { timeout: 15_000 }).toBe(true);
      await expect.poll(() => adapter.status().state, { timeout: 15_000 }).toBe('connected');
      expect(slack.sockets()).toBe(1);
    } finally {
      clearInterval(watch);
    }
  });

  it('keeps retrying, without crashing, while Slack is unreachable', async () => {
    const gone = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
    const lonely = new SlackAdapter({
      token: TOKEN,
      transport: { kind: 'socket', appToken: APP_TOKEN },
      apiUrl: gone.url,
      clock: systemClock,
      logger: silentLogger(),
    });
    try {
      await lonely.start(async () => {});
      await gone.close();
      // A failed apps.connections.open (connection refused) is retried; vitest fails the run on an unhandled rejection.
      await expect
        .poll(() => lonely.status(), { timeout: 15_000 })
        .toMatchObject({
          state: 'reconnecting',
          reason: expect.stringMatching(/fetch failed|ECONNREFUSED/) as unknown as string,
        });
    } finally {
      await lonely.stop();
    }
    expect(lonely.status()).toEqual({ state: 'stopped' });
  });

  it('reports stopped after stop and closes the socket', async () => {
    await adapter.stop();
    expect(adapter.status()).toEqual({ state: 'stopped' });
    await expect.poll(() => slack.sockets(), { timeout: 5_000 }).toBe(0);
  });
});

describe('slackChannel factory', () => {
  const deps = (vars: Record<string, string>) => ({
    env: channelEnv(parseEnv(vars)),
    settings: { owners: { telegram: undefined, slack: undefined, discord: undefined }, pasteJoinMs: 0 },
    clock: systemClock,
    logger: silentLogger(),
  });

  it('is skipped without a bot token, or without a way to receive events', async () => {
    expect(await slackChannel.create(deps({}))).toEqual({ skipped: 'SLACK_BOT_TOKEN not set' });
    expect(
      await slackChannel.create(deps({ SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: 'secret-without-port' })),
    ).toEqual({
      skipped: expect.stringMatching(
        /SLACK_APP_TOKEN \(Socket Mode\), or SLACK_SIGNING_SECRET and SLACK_PORT/,
      ) as unknown as string,
    });
  });

  it('builds an adapter for Socket Mode or for the HTTP Events API', async () => {
    expect(await slackChannel.create(deps({ SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN }))).toBeInstanceOf(
      SlackAdapter,
    );
    expect(
      await slackChannel.create(deps({ SLACK_BOT_TOKEN: TOKEN, SLACK_SIGNING_SECRET: 'secret', SLACK_PORT: '3000' })),
    ).toBeInstanceOf(SlackAdapter);
  });
});
