/**
 * Slack inbound is at-least-once across a crash (issue #10 item 2), through `baton start` and the
 * real Bolt client, over both transports: an event Slack saw acknowledged (the HTTP 200, or the
 * Socket Mode ack) is answered even when the service is killed with SIGKILL right after the ack,
 * before it handled the event. Slack never redelivers an acknowledged event, so only baton's
 * inbox can answer it. A redelivery of the same event (`x-slack-retry-num`), or the same message
 * under another event id, starts no second run.
 *
 * The kill point is observed, not timed: the request is an owner's mention inside a thread, so
 * handling starts with a `conversations.replies` lookup, which the fake holds unanswered; the kill
 * comes once the fake has seen that call (the event was acknowledged and is being handled).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type EventEnvelope, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'xoxb-e2einbox1';
const APP_TOKEN = 'xapp-e2einbox1';
const SIGNING_SECRET = 'fake-signing-secret-inbox';
const OWNER = 'UOWNER10';
const CHANNEL = 'C0INBOX1';

const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;

for (const transport of ['http', 'socket'] as const) {
  describe(`Slack inbox across kill -9 (${transport === 'http' ? 'HTTP Events API' : 'Socket Mode'})`, () => {
    let world: ChatE2E;
    let slack: FakeSlack;
    let deliver: (envelope: EventEnvelope, retryNum?: number) => Promise<void>;

    beforeAll(async () => {
      if (transport === 'http') {
        const port = await freePort();
        slack = await startFakeSlack({
          botToken: TOKEN,
          events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET },
        });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER } },
          env: {
            SLACK_BOT_TOKEN: TOKEN,
            SLACK_SIGNING_SECRET: SIGNING_SECRET,
            SLACK_PORT: String(port),
            SLACK_API_URL: slack.url,
          },
        });
        deliver = async (envelope, retryNum) => {
          expect((await slack.deliver(envelope, retryNum === undefined ? {} : { retryNum })).status).toBe(200);
        };
      } else {
        slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
        world = await startChatE2E({
          trust: { slack: { owner: OWNER } },
          env: { SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.url },
        });
        deliver = (envelope) => slack.deliverSocket(envelope, WAIT_MS);
      }
    });

    afterAll(async () => {
      await world?.dispose();
      await slack?.close();
    });

    it('answers an acknowledged event after the service was killed before handling it; a redelivery starts no second run', async () => {
      if (transport === 'socket')
        await waitFor(() => slack.sockets() === 1, {
          what: 'the Socket Mode connection',
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });
      const root = slack.userMessage({
        kind: 'app_mention',
        channel: CHANNEL,
        user: OWNER,
        text: `<@${slack.bot.userId}> a thread`,
      });
      const request = slack.userMessage({
        kind: 'app_mention',
        channel: CHANNEL,
        user: OWNER,
        text: `<@${slack.bot.userId}> codex inbox task`,
        threadTs: root.event.ts,
      });
      // Handling starts with the thread lookup; the fake holds it until the process is gone.
      slack.delayNext('conversations.replies', 60_000);
      await deliver(request);
      await waitFor(
        () => slack.calls.some((c) => c.method === 'conversations.replies' && c.args.ts === root.event.ts),
        { what: 'the thread lookup', timeoutMs: WAIT_MS, intervalMs: 50 },
      );
      expect(slack.posted.filter(inThread(root.event.ts))).toEqual([]);

      await world.crashAndRestart();
      if (transport === 'socket')
        await waitFor(() => slack.sockets() === 1, {
          what: 'the Socket Mode connection after the restart',
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });

      const started = await slack.waitForPosted(
        (p) => inThread(root.event.ts)(p) && p.args.text!.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.args.text!);
      await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] completed`), WAIT_MS);

      // Slack's retry of the same event, and the same message under another event id.
      await deliver(request, 1);
      await deliver({ ...request, event_id: `${request.event_id}X` });
      const marker = slack.userMessage({
        kind: 'app_mention',
        channel: CHANNEL,
        user: OWNER,
        text: `<@${slack.bot.userId}> /help`,
      });
      await deliver(marker);
      await slack.waitForPosted(inThread(marker.event.ts), WAIT_MS);
      expect(slack.posted.filter((p) => inThread(root.event.ts)(p) && p.args.text!.includes('] started'))).toHaveLength(
        1,
      );
    });
  });
}
