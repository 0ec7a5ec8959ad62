/**
 * Slack's ack waits for the inbox (issue #10 item 2): the real SlackAdapter (Bolt's HTTPReceiver
 * and SocketModeReceiver) against the fake Slack, with the real RunStore as its inbox on the test
 * database. An event is in the database by the time Slack has its acknowledgement; an event that
 * could not be stored is not acknowledged (HTTP 500), so Slack's retry brings it again.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SlackAdapter } from '../../src/channels/slack/adapter.js';
import type { InboundInbox, InboundMessage, InboundPress } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { and, eq } from 'drizzle-orm';
import { RunStore } from '../../src/store/runs-repo.js';
import { inboundEvents } from '../../src/store/schema.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { freePort } from '../support/chat-e2e.js';
import { useTestDatabase } from '../support/database.js';

const TOKEN = 'xoxb-unitinbox';
const APP_TOKEN = 'xapp-unit-inbox';
const SECRET = 'unit-inbox-signing-secret';

const database = useTestDatabase();
let store: RunStore;
let inbox: InboundInbox;
let failWrites = false;

beforeAll(async () => {
  store = new RunStore(database.db);
  inbox = {
    recordInbox: (platform, updates) =>
      failWrites ? Promise.reject(new Error('database unreachable')) : store.inbox.recordInbox(platform, updates),
    receivedInbound: (platform) => store.inbox.receivedInbound(platform),
    forgetInbound: (platform, key) => store.inbox.forgetInbound(platform, key),
    releaseOwnClaims: (platform, inFlight) => store.inbox.releaseClaimsOf(platform, 'unit', inFlight),
  };
});

/** Whether the inbox holds the event, in any state (the handler may have claimed it already). */
async function stored(dedupeKey: string): Promise<boolean> {
  const rows = await database.db
    .select()
    .from(inboundEvents)
    .where(and(eq(inboundEvents.platform, 'slack'), eq(inboundEvents.dedupeKey, dedupeKey)));
  return rows.length === 1;
}

describe('Slack ack after the inbox write', () => {
  it('Socket Mode: the event is stored when Slack has the ack, while its handling has not even begun', async () => {
    const slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
    // The handler never finishes: anything stored was stored before handling, not by it.
    const adapter = new SlackAdapter({
      token: TOKEN,
      transport: { kind: 'socket', appToken: APP_TOKEN },
      apiUrl: slack.url,
      clock: systemClock,
      logger: silentLogger(),
      inbox,
    });
    try {
      await adapter.start(() => new Promise<void>(() => undefined));
      const envelope = slack.userMessage({ kind: 'im', channel: 'D1', user: 'U1', text: '/runs' });
      await slack.deliverSocket(envelope, 30_000);
      expect(await stored(`D1:${envelope.event.ts}`)).toBe(true);
    } finally {
      await adapter.stop();
      await slack.close();
    }
  });

  it('HTTP: an event that cannot be stored is answered 500 and not handled; Slack’s retry is stored and handled', async () => {
    const port = await freePort();
    const slack = await startFakeSlack({
      botToken: TOKEN,
      events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SECRET },
    });
    const received: InboundMessage[] = [];
    const adapter = new SlackAdapter({
      token: TOKEN,
      transport: { kind: 'http', signingSecret: SECRET, port },
      apiUrl: slack.url,
      clock: systemClock,
      logger: silentLogger(),
      inbox,
    });
    try {
      // Claimed as the dispatcher claims, so a replay of the same event is no second handling.
      await adapter.start(async (message) => {
        if (
          message.chatId !== 'D2' ||
          !(await store.inbox.recordInbound('slack', message.dedupeKey, message.receivedAt, 'unit'))
        )
          return;
        received.push(message);
        await store.inbox.markInboundHandled('slack', message.dedupeKey);
      });
      const envelope = slack.userMessage({ kind: 'im', channel: 'D2', user: 'U1', text: '/runs' });
      failWrites = true;
      expect((await slack.deliver(envelope)).status).toBe(500);
      expect(await stored(`D2:${envelope.event.ts}`)).toBe(false);
      failWrites = false;
      expect((await slack.deliver(envelope, { retryNum: 1 })).status).toBe(200);
      expect(await stored(`D2:${envelope.event.ts}`)).toBe(true);
      await expect.poll(() => received.length, { timeout: 30_000 }).toBe(1);
      expect(received[0]).toMatchObject({ dedupeKey: `D2:${envelope.event.ts}`, text: '/runs' });
    } finally {
      failWrites = false;
      await adapter.stop();
      await slack.close();
    }
  });

  it('a press is stored before Slack has its ack; a press the process never acted on is acted on by the next one, once', async () => {
    const slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
    const options = {
      token: TOKEN,
      transport: { kind: 'socket' as const, appToken: APP_TOKEN },
      apiUrl: slack.url,
      clock: systemClock,
      logger: silentLogger(),
      inbox,
    };
    // The first process never gets to act on the press (it "dies" while the handling waits).
    const first = new SlackAdapter({ ...options, presses: () => new Promise<void>(() => undefined) });
    const acted: InboundPress[] = [];
    // Claimed as the dispatcher claims, so a replay or redelivery of the same press acts once.
    const second = new SlackAdapter({
      ...options,
      presses: async (press) => {
        if (!(await store.inbox.recordInbound('slack', press.dedupeKey, press.receivedAt, 'unit'))) return;
        acted.push(press);
        await store.inbox.markInboundHandled('slack', press.dedupeKey);
      },
    });
    try {
      await first.start(async () => undefined);
      const sent = await first.send({
        chatId: 'D3',
        text: '[run hr_0123456789ab] started',
        buttons: [{ label: 'Stop', action: 'stop', arg: 'hr_0123456789ab' }],
      });
      const press = slack.press({ channel: 'D3', messageTs: sent.messageId, user: 'U1', actionId: 'baton:stop' });
      await slack.deliverInteractiveSocket(press, 30_000);
      expect(await stored(press.trigger_id)).toBe(true);
      await first.stop();

      await second.start(async () => undefined);
      await expect.poll(() => acted.length, { timeout: 30_000 }).toBe(1);
      expect(acted[0]).toMatchObject({
        platform: 'slack',
        dedupeKey: press.trigger_id,
        chatId: 'D3',
        messageId: sent.messageId,
        senderId: 'U1',
        action: 'stop',
        arg: 'hr_0123456789ab',
      });
      // Slack delivering the same press again acts on nothing.
      await slack.deliverInteractiveSocket(press, 30_000);
      const barrier = slack.press({ channel: 'D3', messageTs: sent.messageId, user: 'U1', actionId: 'baton:stop' });
      await slack.deliverInteractiveSocket(barrier, 30_000);
      await expect.poll(() => acted.length, { timeout: 30_000 }).toBe(2);
      expect(acted.map((p) => p.dedupeKey)).toEqual([press.trigger_id, barrier.trigger_id]);
    } finally {
      await first.stop();
      await second.stop();
      await slack.close();
    }
  });
});
