/**
 * Slack passes the channel contract: Bolt over Socket Mode against the fake Slack.
 */
import { SlackAdapter } from '../../../src/channels/slack/adapter.js';
import { systemClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import {
  startFakeSlack,
  type BlockActionsPayload,
  type EventEnvelope,
  type FakeSlack,
} from '../../fakes/fake-slack.js';
import { EVERY_CAPABILITY, RATE_LIMIT_RETRY_AFTER_MS, type ChannelDriver, type SendFailure } from './driver.js';
import { describeChannelContract } from './suite.js';

const TOKEN = 'xoxb-contractfake';
const APP_TOKEN = 'xapp-contract-test-app-token';
const USERS = { owner: 'U0OWNER', guest: 'U0GUEST', stranger: 'U0STRANGER' } as const;
/** Each person's direct conversation with the app (an IM channel). */
const DMS = { owner: 'D0OWNER', guest: 'D0GUEST', stranger: 'D0STRANGER' } as const;
const WAIT_MS = 30_000;

/** Slack's answers for each failure (Web API errors; "Rate limits": 429 with `Retry-After` in seconds). */
const FAILURES: Record<SendFailure, { error: string } | { status: 429; retryAfterS: number }> = {
  transient: { error: 'internal_error' },
  permanent: { error: 'channel_not_found' },
  rate_limited: { status: 429, retryAfterS: RATE_LIMIT_RETRY_AFTER_MS / 1000 },
};

type Block = { type: string; elements?: { text?: { text: string } }[] };
const buttonLabels = (blocks: string | undefined): string[] =>
  ((blocks ? JSON.parse(blocks) : []) as Block[])
    .filter((b) => b.type === 'actions')
    .flatMap((b) => (b.elements ?? []).map((e) => e.text?.text ?? ''));

/** The `block_actions` payload of `user`'s press of the button `label` under the posted message `messageTs`. */
function pressOf(slack: FakeSlack, messageTs: string, label: string, user: string): BlockActionsPayload {
  const posted = slack.posted.find((p) => p.message.ts === messageTs);
  const blocks = (posted?.args['blocks'] ? JSON.parse(posted.args['blocks']) : []) as Block[];
  const button = blocks
    .flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : []))
    .find((e) => e.text?.text === label) as { action_id?: string } | undefined;
  if (!posted || !button?.action_id) throw new Error(`no button ${label} under message ${messageTs}`);
  return slack.press({ channel: posted.message.channel, messageTs, user, actionId: button.action_id });
}

function slackDriver(): ChannelDriver {
  let slack: FakeSlack;
  let adapter: SlackAdapter | undefined;
  const deliver = (envelope: EventEnvelope): Promise<void> => slack.deliverSocket(envelope, WAIT_MS);

  return {
    platform: 'slack',
    capabilities: EVERY_CAPABILITY,
    trust: { owner: USERS.owner, guest: USERS.guest },
    startPlatform: async () => {
      slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
    },
    startAdapter: async ({ handler, presses, inbox }) => {
      const transport = { kind: 'socket' as const, appToken: APP_TOKEN };
      adapter = new SlackAdapter({
        token: TOKEN,
        transport,
        apiUrl: slack.url,
        clock: systemClock,
        logger: silentLogger(),
        inbox,
        presses,
      });
      await adapter.start(handler);
      return adapter;
    },
    inject: async (from, text, file) => {
      const envelope =
        from === 'self'
          ? slack.botMessage({ channel: DMS.owner, text })
          : slack.userMessage({
              kind: 'im',
              channel: DMS[from],
              user: USERS[from],
              text,
              ...(file ? { files: [file] } : {}),
            });
      await deliver(envelope);
      return { messageId: envelope.event.ts, redeliver: () => deliver(envelope) };
    },
    ownerTarget: () => ({ platform: 'slack', chatId: DMS.owner }),
    sent: () =>
      slack.posted.map((p) => ({
        messageId: p.message.ts,
        text: p.args['text'] ?? '',
        replyTo: p.args['thread_ts'],
        buttons: buttonLabels(p.args['blocks']),
      })),
    documents: () => slack.uploads.map((u) => ({ filename: u.filename, content: u.content })),
    edits: () => slack.updates.map((u) => ({ messageId: u.args['ts'] ?? '', text: u.args['text'] ?? '' })),
    press: async (messageId, label, from) => {
      const payload = pressOf(slack, messageId, label, USERS[from]);
      await slack.deliverInteractiveSocket(payload, WAIT_MS);
      return { redeliver: () => slack.deliverInteractiveSocket(payload, WAIT_MS) };
    },
    pressAnswers: () => slack.ephemerals.map((e) => e.args['text'] ?? ''),
    failNextSend: (failure) => slack.failNext('chat.postMessage', FAILURES[failure]),
    stop: async () => {
      await adapter?.stop();
      await slack?.close();
    },
  };
}

describeChannelContract(slackDriver);
