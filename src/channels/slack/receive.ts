/**
 * Receiving from Slack: the Bolt app over Socket Mode or the HTTP Events API, each event meant
 * for baton stored before Slack is acknowledged, each conversation (a channel's top level, or
 * one thread) handled in arrival order, and a reply in a run's thread given its run.
 */
import { App, HTTPReceiver, SocketModeReceiver, type Receiver, type webApi } from '@slack/bolt';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { ConversationQueue } from '../conversation-queue.js';
import { ChannelInbox } from '../inbox.js';
import type { IncomingAttachment, InboundHandler, InboundInbox, InboundMessage, PressHandler } from '../types.js';
import { boltLogger } from './bolt-logger.js';
import { SLACK_ACTION_PREFIX } from './buttons.js';
import { describeSlackError } from './errors.js';
import { InboxFirstReceiver, inboxEntriesOf } from './inbox-first-receiver.js';
import {
  compareSlackTs,
  needsThreadLookup,
  normalizeSlackEvent,
  type SlackBotIdentity,
  type SlackEventEnvelope,
  type SlackFile,
} from './normalize.js';
import {
  batonActions,
  handleSlackPress,
  isBlockActions,
  type SlackBlockActions,
  type SlackButtonAction,
  type SlackStored,
} from './presses.js';
import { runMessageInThread } from './thread.js';

/** Path of the Events API request URL baton serves ("Request URL" in the app's Event Subscriptions). */
export const SLACK_EVENTS_PATH = '/slack/events';

/** How baton receives Slack events. */
export type SlackTransport =
  | { kind: 'socket'; appToken: string }
  | { kind: 'http'; signingSecret: string; port: number };

/** What building the app needs from the adapter. */
export interface SlackReceiveContext {
  token: string;
  transport: SlackTransport;
  client: webApi.WebClient;
  clientOptions: webApi.WebClientOptions;
  clock: Clock;
  logger: Logger;
  secrets: readonly string[];
  /** The conversation order every live or replayed message is handled in. */
  conversations: ConversationQueue;
  inbox?: InboundInbox | undefined;
  presses?: PressHandler | undefined;
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
  attach(file: SlackFile): IncomingAttachment;
  /** Told of a Socket Mode receiver, so its connection is kept. */
  watchSocket(receiver: SocketModeReceiver): void;
}

/**
 * The Bolt app (not started) and the inbox it stores into: `handler` gets every message meant for
 * baton, presses go to the context's press handler.
 */
export function createSlackApp(
  context: SlackReceiveContext,
  bot: SlackBotIdentity,
  handler: InboundHandler,
): { app: App; inbox: ChannelInbox<SlackStored> } {
  const log = boltLogger(context.logger, context.secrets);
  const transport = transportReceiver(context, log);
  if (transport instanceof SocketModeReceiver) context.watchSocket(transport);
  let delivery: SlackDelivery | undefined;
  const inbox = new ChannelInbox<SlackStored>({
    platform: 'slack',
    inbox: context.inbox,
    logger: context.logger,
    redeliver: (stored) => delivery!.redeliver(stored),
    compare: (a, b) => compareSlackTs(storedTs(a), storedTs(b)),
  });
  delivery = slackDelivery(context, bot, inbox, handler);
  const receiver = inbox.enabled ? storingReceiver(context, transport, inbox, bot) : transport;
  // botId and botUserId given: Bolt skips its own auth.test, whose failure would be unhandled.
  const app = new App({
    token: context.token,
    botId: bot.botId,
    botUserId: bot.userId,
    receiver,
    logger: log,
    clientOptions: context.clientOptions,
    convoStore: false,
  });
  listen(app, context, delivery);
  return { app, inbox };
}

/** The transport's own receiver: Socket Mode connects out; HTTP listens on the port. */
function transportReceiver(
  { transport, clientOptions }: SlackReceiveContext,
  log: ReturnType<typeof boltLogger>,
): HTTPReceiver | SocketModeReceiver {
  return transport.kind === 'socket'
    ? // Reconnection is ours (SocketWatch): @slack/socket-mode's own leaves a rejected promise
      // unhandled when apps.connections.open fails on the network, which would end the process.
      new SocketModeReceiver({
        appToken: transport.appToken,
        logger: log,
        installerOptions: { clientOptions },
        autoReconnectEnabled: false,
      })
    : new HTTPReceiver({
        signingSecret: transport.signingSecret,
        endpoints: SLACK_EVENTS_PATH,
        port: transport.port,
        logger: log,
      });
}

/** `transport` behind an {@link InboxFirstReceiver} that stores into `inbox`. */
function storingReceiver(
  { clock, logger, secrets }: SlackReceiveContext,
  transport: Receiver,
  inbox: ChannelInbox<SlackStored>,
  bot: SlackBotIdentity,
): Receiver {
  return new InboxFirstReceiver(transport, async (body) => {
    const entries = inboxEntriesOf(body, bot, clock.now());
    if (entries.length === 0) return;
    try {
      await inbox.record(entries);
    } catch (err) {
      // Not acknowledged: Slack delivers the event again (HTTP: up to 3 retries; Socket Mode: again on a connection).
      logger.error(
        { channel: 'slack', err: describeSlackError(err, secrets) },
        'could not store a slack event; not acknowledged, so Slack redelivers it',
      );
      throw err;
    }
  });
}

/** Handing live and stored events and presses on. */
interface SlackDelivery {
  deliver(body: SlackEventEnvelope): Promise<void>;
  press(body: SlackBlockActions, action: SlackButtonAction): Promise<void>;
  redeliver(stored: SlackStored): Promise<void>;
}

function slackDelivery(
  context: SlackReceiveContext,
  bot: SlackBotIdentity,
  inbox: ChannelInbox<SlackStored>,
  handler: InboundHandler,
): SlackDelivery {
  const { client, clock, logger, secrets } = context;
  // Bolt runs listeners of different events concurrently: one conversation (a channel's top
  // level, or one thread) is handled strictly in arrival order, the thread lookup included.
  const deliver = (body: SlackEventEnvelope): Promise<void> => {
    const message = normalizeSlackEvent(body, bot, clock.now(), (file) => context.attach(file));
    if (!message) return Promise.resolve();
    const key = `${body.event.channel}:${body.event.thread_ts ?? ''}`;
    const handle = (): Promise<void> =>
      inbox.track(message.dedupeKey, async () => {
        const runText = needsThreadLookup(message)
          ? await runMessageInThread(client, bot, message.chatId, message.replyToMessageId!, { logger, secrets })
          : undefined;
        await handler(runText === undefined ? message : { ...message, replyToBotText: runText });
      });
    return context.overtakes?.(message) ? handle() : context.conversations.run(key, handle);
  };
  const pressContext = { client, clock, logger, secrets, presses: context.presses, inbox };
  const press = (body: SlackBlockActions, action: SlackButtonAction): Promise<void> =>
    handleSlackPress(pressContext, body, action);
  return {
    deliver,
    press,
    // Stored events are handed straight to deliver (Bolt's middleware already passed them once);
    // stored presses to the press handling, one call per baton button in the payload.
    redeliver: async (stored) => {
      if (!isBlockActions(stored)) return deliver(stored);
      for (const action of batonActions(stored)) await press(stored, action);
    },
  };
}

/** The app's listeners: mentions and direct messages, presses of baton's buttons, errors. */
function listen(app: App, { logger, secrets }: SlackReceiveContext, delivery: SlackDelivery): void {
  app.event('app_mention', async ({ body }) => delivery.deliver(body as unknown as SlackEventEnvelope));
  app.event('message', async ({ event, body }) => {
    if ('channel_type' in event && event.channel_type === 'im')
      await delivery.deliver(body as unknown as SlackEventEnvelope);
  });
  app.action(new RegExp(`^${SLACK_ACTION_PREFIX}`), async ({ ack, body, action }) => {
    // Slack wants the ack within 3 s ("Handling user interaction"); the press is acted on after.
    // With an inbox the press is stored by then (InboxFirstReceiver), so a press acknowledged by
    // a process that dies before acting on it is acted on after the restart.
    await ack();
    await delivery.press(body as unknown as SlackBlockActions, action as unknown as SlackButtonAction);
  });
  app.error(async (err) => {
    logger.error(
      { channel: 'slack', err: describeSlackError(err.original ?? err, secrets) },
      'slack event handler failed',
    );
  });
}

/** Arrival time of a stored event or press, as a Slack ts (the message's, or the action's `action_ts`). */
function storedTs(stored: SlackStored): string {
  return isBlockActions(stored) ? (stored.actions?.[0]?.action_ts ?? '0') : stored.event.ts;
}
