/**
 * The Slack channel: Bolt for JavaScript over Socket Mode (app-level token) or the HTTP Events API
 * (signing secret + port), plain-text replies in the request's thread. Slack API facts: "Events
 * API" (ack within 3 seconds; retries carry `x-slack-retry-num`), "Verifying requests from Slack"
 * (HMAC signature, timestamps older than 5 minutes refused — done by Bolt's HTTPReceiver),
 * "Socket Mode" (`apps.connections.open`), `auth.test`, `chat.postMessage`, `conversations.replies`.
 */
import {
  App,
  HTTPReceiver,
  SocketModeReceiver,
  webApi,
  type Receiver,
  type ReceiverEvent,
  type types as slackTypes,
} from '@slack/bolt';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { ConversationQueue } from '../conversation-queue.js';
import { AttachmentDownloadError, fetchDownload } from '../download.js';
import { ChannelInbox } from '../inbox.js';
import {
  ChannelSendError,
  type ChannelAdapter,
  type ChannelState,
  type IncomingAttachment,
  type InboundHandler,
  type InboundInbox,
  type InboundMessage,
  type MessageEdit,
  type OutboundDocument,
  type OutboundMessage,
  type PressHandler,
} from '../types.js';
import type { ButtonJson } from '../../core/buttons.js';
import { boltLogger } from './bolt-logger.js';
import { classifySlackError, describeSlackError } from './errors.js';
import {
  compareSlackTs,
  needsThreadLookup,
  normalizeSlackEvent,
  type SlackBotIdentity,
  type SlackEventEnvelope,
  type SlackFile,
} from './normalize.js';
import { decodeSlackText, escapeSlackText } from './text.js';
import { splitSlackSections } from './sections.js';
import { toSlackMrkdwn } from '../../delivery/chat-markdown.js';

/** Where Slack serves `url_private_download`. */
const SLACK_FILES_ORIGIN = 'https://files.slack.com';

/** Largest file Slack takes, in bytes (docs.slack.dev "Uploading files": 1 GB). */
const SLACK_MAX_FILE_BYTES = 1024 * 1024 * 1024;

/**
 * Longest text of one message, in UTF-16 code units, before escaping. `chat.postMessage` advises
 * at most 4,000 characters in `text` and answers `msg_too_long` past its real limit.
 */
export const SLACK_MAX_MESSAGE_LENGTH = 4000;
/** Path of the Events API request URL baton serves ("Request URL" in the app's Event Subscriptions). */
export const SLACK_EVENTS_PATH = '/slack/events';

/** How baton receives Slack events. */
export type SlackTransport =
  | { kind: 'socket'; appToken: string }
  | { kind: 'http'; signingSecret: string; port: number };

/** Options of the {@link SlackAdapter}. */
export interface SlackAdapterOptions {
  /** Bot token (`xoxb-…`). */
  token: string;
  transport: SlackTransport;
  /** Web API base URL, e.g. a proxy. @default https://slack.com/api/ */
  apiUrl?: string | undefined;
  clock: Clock;
  logger: Logger;
  /** Longest wait for the connection at start, in ms. @default 30_000 */
  startTimeoutMs?: number;
  /**
   * Where each event meant for baton is stored before Slack is told it arrived (the HTTP answer
   * or the Socket Mode ack), and where events left unhandled by a process that died are found at
   * start. @default none (an event acknowledged by a process that dies before handling it is lost)
   */
  inbox?: InboundInbox | undefined;
  /** Where presses of baton's Block Kit buttons go. @default none: a press is answered "no longer does anything" */
  presses?: PressHandler | undefined;
  /**
   * Messages handled at once, not behind their conversation's earlier ones still being handled
   * (`/stop`, `/cancel` while a launch downloads its files). @default none
   */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
}

/** Prefix of the `action_id` of every baton button: `baton:<action>` (the arg is the button's `value`). */
export const SLACK_ACTION_PREFIX = 'baton:';
/** Longest `action_id` and `value` of a button (Block Kit "Button element": 255 and 2000 characters). */
const SLACK_ACTION_ID_MAX = 255;
const SLACK_BUTTON_VALUE_MAX = 2000;
/** Most elements of one `actions` block (Block Kit "Actions block": max 25) — baton's rows have at most 3. */
const SLACK_ACTIONS_MAX = 25;

/** First wait before reconnecting a lost Socket Mode connection, in ms; doubles per failure. */
const SOCKET_RETRY_FIRST_MS = 1_000;
/** Longest wait between Socket Mode reconnection attempts, in ms. */
const SOCKET_RETRY_MAX_MS = 60_000;
/** Longest wait for Bolt to stop (close the socket or the HTTP server), in ms. */
const STOP_TIMEOUT_MS = 5_000;
/** Pages of `conversations.replies` read to find the thread's run message (200 messages a page). */
const MAX_THREAD_PAGES = 5;
const RUN_MESSAGE = /^\[run hr_[0-9a-f]{12}\]/;

/** Slack via Bolt. */
export class SlackAdapter implements ChannelAdapter {
  readonly platform = 'slack' as const;
  readonly maxMessageLength = SLACK_MAX_MESSAGE_LENGTH;
  private readonly secrets: string[];
  private readonly client: webApi.WebClient;
  private app: App | undefined;
  private state: ChannelState = { state: 'stopped' };
  private readonly conversations = new ConversationQueue();
  private socketRetryMs = SOCKET_RETRY_FIRST_MS;
  private socketRetryTimer: NodeJS.Timeout | undefined;
  private inbox: ChannelInbox<SlackStored> | undefined;

  constructor(private readonly options: SlackAdapterOptions) {
    const { transport } = options;
    this.secrets = [options.token, transport.kind === 'socket' ? transport.appToken : transport.signingSecret];
    this.client = new webApi.WebClient(options.token, this.clientOptions());
  }

  /**
   * Checks the token (`auth.test`), then listens: Socket Mode connects out; the HTTP receiver
   * listens on the port. Each event meant for baton is stored in the inbox before Bolt
   * acknowledges it (and handled after); events stored by a process that died before handling
   * them are handled first.
   *
   * @throws ChannelSendError when the token is refused, Slack is unreachable or the port is taken.
   */
  async start(handler: InboundHandler): Promise<void> {
    const { logger, transport } = this.options;
    try {
      const auth = await this.client.auth.test();
      if (!auth.user_id || !auth.bot_id)
        throw new Error('auth.test returned no bot user: SLACK_BOT_TOKEN must be a bot token (xoxb-…)');
      const bot = { userId: auth.user_id, botId: auth.bot_id };
      const app = this.createApp(bot, handler);
      await this.inbox?.replaySafely();
      await withTimeout(app.start(), this.options.startTimeoutMs ?? 30_000, 'Slack connection').catch(
        async (err: unknown) => {
          await app.stop().catch(() => undefined);
          throw err;
        },
      );
      this.app = app;
      this.inbox?.startRetrying();
      this.state = { state: 'connected' };
      logger.info({ channel: 'slack', bot: auth.user, transport: transport.kind }, 'slack connected');
    } catch (err) {
      const failure = classifySlackError(err, 'start', this.secrets);
      this.state = { state: 'failed', reason: failure.message };
      throw failure;
    }
  }

  async stop(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    this.state = { state: 'stopped' };
    this.inbox?.stop();
    if (this.socketRetryTimer) clearTimeout(this.socketRetryTimer);
    if (app) await withTimeout(app.stop(), STOP_TIMEOUT_MS, 'Slack shutdown');
  }

  /**
   * Shares one file in the target's thread with `files.uploadV2` of @slack/web-api (it calls
   * `files.getUploadURLExternal`, uploads the bytes to the URL Slack answers, then
   * `files.completeUploadExternal` with `channel_id`, `thread_ts` and the caption as
   * `initial_comment`). Needs the `files:write` scope.
   *
   * @returns the file id (`F…`): the upload flow answers no message ts.
   * @throws ChannelSendError as {@link send}; `refused` for a file over Slack's 1 GB limit.
   */
  async sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    // docs.slack.dev "Uploading files": files up to 1 GB.
    if (document.content.length > SLACK_MAX_FILE_BYTES) {
      throw new ChannelSendError(
        'refused',
        `Slack files.uploadV2: ${document.filename} is ${document.content.length} bytes, over Slack's 1 GB limit`,
      );
    }
    const threadTs = document.threadId ?? document.replyToMessageId;
    try {
      const base = {
        channel_id: document.chatId,
        file: document.content,
        filename: document.filename,
        title: document.filename,
        ...(document.caption ? { initial_comment: escapeSlackText(document.caption) } : {}),
      };
      const result = await this.client.filesUploadV2(threadTs ? { ...base, thread_ts: threadTs } : base);
      const id = (result.files as { files?: { id?: string }[] }[] | undefined)?.[0]?.files?.[0]?.id;
      if (!id) throw new Error('files.completeUploadExternal returned no file id');
      return { messageId: id };
    } catch (err) {
      throw classifySlackError(err, 'files.uploadV2', this.secrets);
    }
  }

  /**
   * Posts one message, escaped, in the target's thread (`thread_ts`), links not unfurled. With
   * buttons the message also carries Block Kit `blocks` (see {@link slackBlocks}); `text` stays,
   * for notifications.
   */
  async send(message: OutboundMessage): Promise<{ messageId: string }> {
    const threadTs = message.threadId ?? message.replyToMessageId;
    const format = message.format ?? 'plain';
    try {
      const sent = await this.client.chat.postMessage({
        channel: message.chatId,
        text: slackText(message.text, format),
        // A plain text stays plain: no *bold*/_italic_ from user content. Either way the text is
        // escaped, which keeps out mentions.
        mrkdwn: format === 'markdown',
        unfurl_links: false,
        unfurl_media: false,
        ...(message.buttons?.length ? { blocks: slackBlocks(message.text, message.buttons, format) } : {}),
        ...(threadTs ? { thread_ts: threadTs } : {}),
      });
      if (!sent.ts) throw new Error('chat.postMessage returned no ts');
      return { messageId: sent.ts };
    } catch (err) {
      throw classifySlackError(err, 'chat.postMessage', this.secrets);
    }
  }

  /**
   * `chat.update` of a message the bot posted (`channel` + `ts`), escaped and plain as sent. Slack
   * accepts an unchanged text, so there is no "not modified" case; a 429 is thrown with its
   * `Retry-After` (the client rejects rate-limited calls instead of waiting).
   */
  async editMessage(edit: MessageEdit): Promise<void> {
    try {
      // chat.update has no `mrkdwn` argument (ChatUpdateArguments, @slack/web-api 7); the text is
      // escaped as for posting, so user content still cannot mention anyone.
      // chat.update keeps a message's previous blocks when none are given: an edit always sends its
      // own, so the shown text follows the edit and the buttons go when the edit has none.
      const format = edit.format ?? 'plain';
      await this.client.chat.update({
        channel: edit.chatId,
        ts: edit.messageId,
        text: slackText(edit.text, format),
        blocks: slackBlocks(edit.text, edit.buttons ?? [], format),
      });
    } catch (err) {
      throw classifySlackError(err, 'chat.update', this.secrets);
    }
  }

  status(): ChannelState {
    return this.state;
  }

  /**
   * A shared file, downloaded only when the dispatcher asks: a GET of its `url_private_download`
   * with the bot token (Slack "Downloading files": `Authorization: Bearer`, scope `files:read`).
   * The token goes only to Slack's file host (`files.slack.com`) or the configured API server's
   * origin; any other URL is refused.
   */
  private attachment(file: SlackFile): IncomingAttachment {
    const name = file.name ?? file.id;
    return {
      name,
      sizeBytes: file.size,
      open: async (signal) => {
        const url = new URL(file.url_private_download ?? file.url_private ?? '');
        const own = this.options.apiUrl ? new URL(this.options.apiUrl).origin : undefined;
        if (url.origin !== SLACK_FILES_ORIGIN && url.origin !== own) {
          throw new AttachmentDownloadError(
            `Slack gave it a download URL outside ${SLACK_FILES_ORIGIN}; the bot token was not sent there`,
            { transient: false },
          );
        }
        try {
          // Never followed: a redirect would carry the token elsewhere.
          return await fetchDownload(
            url,
            {
              headers: { authorization: `Bearer ${this.options.token}` },
              redirect: 'manual',
              ...(signal ? { signal } : {}),
            },
            'Slack',
            (text) => redactAll(text, this.secrets),
          );
        } catch (err) {
          // Without files:read Slack answers with a redirect to its sign-in page, not the file.
          if (
            err instanceof AttachmentDownloadError &&
            err.status !== undefined &&
            err.status >= 300 &&
            err.status < 400
          ) {
            throw new AttachmentDownloadError(
              `Slack answered with a redirect to its sign-in page (HTTP ${err.status}), not the file`,
              {
                transient: false,
                fix: 'Give the Slack app the files:read scope, reinstall it, then send the file again.',
              },
            );
          }
          throw err;
        }
      },
    };
  }

  private clientOptions(): webApi.WebClientOptions {
    return {
      ...(this.options.apiUrl ? { slackApiUrl: this.options.apiUrl } : {}),
      logger: boltLogger(this.options.logger, this.secrets),
      // A 429 goes back to the outbox with its Retry-After instead of blocking the send queue.
      rejectRateLimitedCalls: true,
      // One quick retry for a network blip; the outbox owns longer backoff.
      retryConfig: { retries: 1, factor: 2, minTimeout: 500, maxTimeout: 2_000 },
      timeout: 30_000,
    };
  }

  private createApp(bot: SlackBotIdentity, handler: InboundHandler): App {
    const { transport, logger, clock } = this.options;
    const log = boltLogger(logger, this.secrets);
    const clientOptions = this.clientOptions();
    const transportReceiver: HTTPReceiver | SocketModeReceiver =
      transport.kind === 'socket'
        ? // Reconnection is ours (watchSocket): @slack/socket-mode's own leaves a rejected promise
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
    if (transportReceiver instanceof SocketModeReceiver) this.watchSocket(transportReceiver);
    // Bolt runs listeners of different events concurrently: one conversation (a channel's top
    // level, or one thread) is handled strictly in arrival order, the thread lookup included.
    const deliver = (body: SlackEventEnvelope): Promise<void> => {
      const message = normalizeSlackEvent(body, bot, clock.now(), (file) => this.attachment(file));
      if (!message) return Promise.resolve();
      const key = `${body.event.channel}:${body.event.thread_ts ?? ''}`;
      const handle = (): Promise<void> =>
        inbox.track(message.dedupeKey, async () => {
          const runText = needsThreadLookup(message)
            ? await this.runMessageInThread(bot, message.chatId, message.replyToMessageId!)
            : undefined;
          await handler(runText === undefined ? message : { ...message, replyToBotText: runText });
        });
      return this.options.overtakes?.(message) ? handle() : this.conversations.run(key, handle);
    };
    // Stored events are handed straight to deliver (Bolt's middleware already passed them once);
    // stored presses to handlePress, one call per baton button in the payload.
    const redeliver = async (stored: SlackStored): Promise<void> => {
      if (!isBlockActions(stored)) return deliver(stored);
      for (const action of batonActions(stored)) await this.handlePress(stored, action);
    };
    const inbox = new ChannelInbox<SlackStored>({
      platform: 'slack',
      inbox: this.options.inbox,
      logger,
      redeliver,
      compare: (a, b) => compareSlackTs(storedTs(a), storedTs(b)),
    });
    this.inbox = inbox;
    const receiver = inbox.enabled
      ? new InboxFirstReceiver(transportReceiver, async (body) => {
          const entries = inboxEntriesOf(body, bot, clock.now());
          if (entries.length === 0) return;
          try {
            await inbox.record(entries);
          } catch (err) {
            // Not acknowledged: Slack delivers the event again (HTTP: up to 3 retries; Socket Mode: again on a connection).
            logger.error(
              { channel: 'slack', err: describeSlackError(err, this.secrets) },
              'could not store a slack event; not acknowledged, so Slack redelivers it',
            );
            throw err;
          }
        })
      : transportReceiver;
    // botId and botUserId given: Bolt skips its own auth.test, whose failure would be unhandled.
    const app = new App({
      token: this.options.token,
      botId: bot.botId,
      botUserId: bot.userId,
      receiver,
      logger: log,
      clientOptions,
      convoStore: false,
    });
    app.event('app_mention', async ({ body }) => deliver(body as unknown as SlackEventEnvelope));
    app.event('message', async ({ event, body }) => {
      if ('channel_type' in event && event.channel_type === 'im') await deliver(body as unknown as SlackEventEnvelope);
    });
    app.action(new RegExp(`^${SLACK_ACTION_PREFIX}`), async ({ ack, body, action }) => {
      // Slack wants the ack within 3 s ("Handling user interaction"); the press is acted on after.
      // With an inbox the press is stored by then (InboxFirstReceiver), so a press acknowledged by
      // a process that dies before acting on it is acted on after the restart.
      await ack();
      await this.handlePress(body as unknown as SlackBlockActions, action as unknown as SlackButtonAction);
    });
    app.error(async (err) => {
      logger.error(
        { channel: 'slack', err: describeSlackError(err.original ?? err, this.secrets) },
        'slack event handler failed',
      );
    });
    return app;
  }

  /**
   * One `block_actions` press of a baton button, normalized and handed to the press handler. The
   * dedupe key is {@link slackPressKey}. The answer is an ephemeral message (`chat.postEphemeral`)
   * only the presser sees, in the message's thread. The press was stored in the inbox before
   * Slack had its ack (like a message); the dispatcher's claim by dedupe key keeps a redelivered
   * or replayed press from acting twice.
   */
  private async handlePress(body: SlackBlockActions, action: SlackButtonAction): Promise<void> {
    const { logger, clock } = this.options;
    const channel = body.channel?.id ?? body.container?.channel_id;
    const messageTs = body.container?.message_ts ?? body.message?.ts;
    const user = body.user?.id;
    const dedupeKey = slackPressKey(body, action);
    // Not under a message baton can answer in (a modal, a stray payload): never acted on, so not kept.
    if (!channel || !messageTs || !user) return this.inbox?.forget(dedupeKey);
    const threadTs = body.message?.thread_ts;
    let answered = false;
    const answer = async (text: string): Promise<void> => {
      if (answered) return;
      answered = true;
      await this.client.chat
        .postEphemeral({ channel, user, text: escapeSlackText(text), ...(threadTs ? { thread_ts: threadTs } : {}) })
        .catch((err: unknown) =>
          logger.info(
            { channel: 'slack', err: describeSlackError(err, this.secrets) },
            'could not answer a button press',
          ),
        );
    };
    const presses = this.options.presses;
    if (!presses || !action.action_id.startsWith(SLACK_ACTION_PREFIX)) {
      await this.inbox?.forget(dedupeKey);
      await answer('This button no longer does anything.');
      return;
    }
    const press = {
      platform: 'slack' as const,
      dedupeKey,
      chatId: channel,
      ...(threadTs ? { threadId: threadTs } : {}),
      messageId: messageTs,
      senderId: user,
      isDirect: channel.startsWith('D'),
      action: action.action_id.slice(SLACK_ACTION_PREFIX.length),
      arg: action.value ?? '',
      receivedAt: clock.now(),
      answer,
    };
    await (this.inbox ? this.inbox.track(dedupeKey, () => presses(press)) : presses(press));
  }

  /** Keeps Socket Mode connected: on every disconnect, reconnect with backoff and mirror the state. */
  private watchSocket(receiver: SocketModeReceiver): void {
    const socket = receiver.client;
    socket.on('connected', () => {
      this.socketRetryMs = SOCKET_RETRY_FIRST_MS;
      if (this.app) this.state = { state: 'connected' };
    });
    socket.on('disconnected', () => {
      if (this.app) this.reconnectSocket(receiver, 'Socket Mode connection lost');
    });
  }

  private reconnectSocket(receiver: SocketModeReceiver, reason: string): void {
    if (this.socketRetryTimer || !this.app) return;
    const waitMs = this.socketRetryMs;
    this.socketRetryMs = Math.min(waitMs * 2, SOCKET_RETRY_MAX_MS);
    this.state = { state: 'reconnecting', reason };
    this.options.logger.warn(
      { channel: 'slack', reason, retryInMs: waitMs },
      'slack socket mode disconnected; reconnecting',
    );
    this.socketRetryTimer = setTimeout(() => {
      this.socketRetryTimer = undefined;
      if (!this.app) return;
      receiver.client
        .start()
        .catch((err: unknown) => this.reconnectSocket(receiver, describeSlackError(err, this.secrets)));
    }, waitMs);
    this.socketRetryTimer.unref();
  }

  /**
   * Text of this app's latest `[run …]` message in a thread (`conversations.replies`), decoded, so
   * a reply in a run's thread finds its run. A failed lookup is logged and the message handled
   * without it: commands in the thread still work.
   */
  private async runMessageInThread(
    bot: SlackBotIdentity,
    channel: string,
    threadTs: string,
  ): Promise<string | undefined> {
    let latest: string | undefined;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_THREAD_PAGES; page++) {
        const result = await this.client.conversations.replies({
          channel,
          ts: threadTs,
          limit: 200,
          ...(cursor ? { cursor } : {}),
        });
        for (const reply of result.messages ?? []) {
          const mine = reply.user === bot.userId || reply.bot_id === bot.botId;
          const text = reply.text === undefined ? '' : decodeSlackText(reply.text);
          if (mine && RUN_MESSAGE.test(text)) latest = text;
        }
        cursor = result.response_metadata?.next_cursor || undefined;
        if (!result.has_more || !cursor) break;
      }
    } catch (err) {
      this.options.logger.warn(
        { channel: 'slack', err: describeSlackError(err, this.secrets) },
        'slack thread lookup failed; handling the message without it',
      );
    }
    return latest;
  }
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} not established within ${Math.round(timeoutMs / 1000)}s`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A Bolt receiver in front of the transport's own (HTTP or Socket Mode): each event is first given
 * to `store`, and only once that resolves to Bolt's `App.processEvent`, which acknowledges Events
 * API events before it runs any listener (@slack/bolt 5.1.0 `App.processEvent`: "Events API
 * requests are acknowledged right away"; neither receiver offers a hook between receipt and ack,
 * and `processBeforeResponse` would hold the HTTP answer until the whole command is handled). A
 * failed store throws before the ack: HTTPReceiver answers 500 and SocketModeReceiver sends no
 * ack, so Slack delivers the event again.
 */
class InboxFirstReceiver implements Receiver {
  constructor(
    private readonly transport: Receiver,
    private readonly store: (body: ReceiverEvent['body']) => Promise<void>,
  ) {}

  init(app: App): void {
    // The transport receivers use nothing of the app but processEvent.
    const front = {
      processEvent: async (event: ReceiverEvent): Promise<void> => {
        if ((event.body as { type?: string }).type === 'block_actions') {
          // A press must be acknowledged within Slack's 3 s, whatever the database does: waited for
          // PRESS_STORE_WAIT_MS at most, then acknowledged; the dispatcher's claim acts on it once
          // the database answers (a press lost to a crash in that gap is pressed again).
          const stored = this.store(event.body);
          stored.catch(() => undefined);
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            stored.catch(() => undefined),
            new Promise<void>((resolve) => (timer = setTimeout(resolve, PRESS_STORE_WAIT_MS))),
          ]);
          clearTimeout(timer);
          await app.processEvent(event);
          return;
        }
        await this.store(event.body);
        await app.processEvent(event);
      },
    };
    this.transport.init(front as unknown as App);
  }

  start(...args: unknown[]): Promise<unknown> {
    return this.transport.start(...args);
  }

  stop(...args: unknown[]): Promise<unknown> {
    return this.transport.stop(...args);
  }
}

/**
 * Longest wait for a press's inbox write before the press is acknowledged anyway, in ms: well
 * inside the 3 s Slack gives an interaction ("Handling user interaction").
 */
const PRESS_STORE_WAIT_MS = 1_000;

/** The parts of a Slack `block_actions` payload baton reads (Slack "block_actions payloads"). */
interface SlackBlockActions {
  type: 'block_actions';
  trigger_id?: string;
  actions?: SlackButtonAction[];
  user?: { id?: string };
  channel?: { id?: string };
  container?: { channel_id?: string; message_ts?: string };
  message?: { ts?: string; thread_ts?: string };
}

/** What the Slack inbox keeps: an Events API envelope, or a `block_actions` payload (a press). */
type SlackStored = SlackEventEnvelope | SlackBlockActions;

function isBlockActions(stored: SlackStored): stored is SlackBlockActions {
  return (stored as { type?: string }).type === 'block_actions';
}

/** The pressed baton buttons of a payload (one in practice: a press is one button). */
function batonActions(body: SlackBlockActions): SlackButtonAction[] {
  return (body.actions ?? []).filter(
    (a) => typeof a.action_id === 'string' && a.action_id.startsWith(SLACK_ACTION_PREFIX),
  );
}

/** Arrival time of a stored event or press, as a Slack ts (the message's, or the action's `action_ts`). */
function storedTs(stored: SlackStored): string {
  return isBlockActions(stored) ? (stored.actions?.[0]?.action_ts ?? '0') : stored.event.ts;
}

/** The dedupe key of a press: the payload's `trigger_id` (one per user interaction), else the message ts plus the action's `action_ts`. */
function slackPressKey(body: SlackBlockActions, action: SlackButtonAction): string {
  return body.trigger_id ?? `${body.container?.message_ts ?? body.message?.ts ?? ''}:${action.action_ts ?? ''}`;
}

/**
 * What of a received Slack body goes to the inbox before Slack is acknowledged: a message meant
 * for baton (the app's own and other bots' messages, edits, joins and channel messages without a
 * mention are never stored: they would be replayed forever), or a press of a baton button.
 */
function inboxEntriesOf(
  body: ReceiverEvent['body'],
  bot: SlackBotIdentity,
  now: Date,
): { dedupeKey: string; receivedAt: Date; payload: unknown }[] {
  const typed = body as { type?: string; event?: unknown };
  if (typed.type === 'block_actions') {
    const payload = body as unknown as SlackBlockActions;
    return batonActions(payload).map((action) => ({
      dedupeKey: slackPressKey(payload, action),
      receivedAt: now,
      payload,
    }));
  }
  if (typed.type !== 'event_callback' || !typed.event) return [];
  const message = normalizeSlackEvent(body as unknown as SlackEventEnvelope, bot, now);
  if (!message || message.senderIsBot) return [];
  return [{ dedupeKey: message.dedupeKey, receivedAt: message.receivedAt, payload: body }];
}

/** One pressed button element of a `block_actions` payload. */
interface SlackButtonAction {
  action_id: string;
  value?: string;
  action_ts?: string;
}

/**
 * Block Kit for a message with buttons: the text (escaped, as `plain_text`; a `markdown` text as
 * `mrkdwn`) in `section` blocks of at most 3,000 characters each, cut as {@link splitSlackSections} cuts, then one `actions` block with a `button` per {@link ButtonJson}:
 * `action_id` `baton:<action>`, `value` the arg; Deny and Stop are `danger`. Without buttons only
 * the sections (an edit that removes the buttons).
 *
 * @throws ChannelSendError `malformed` when an `action_id` or `value` is over Slack's limits.
 */
export function slackBlocks(
  text: string,
  buttons: readonly ButtonJson[],
  format: 'plain' | 'markdown' = 'plain',
): slackTypes.KnownBlock[] {
  const mrkdwn = format === 'markdown';
  const blocks: slackTypes.KnownBlock[] = splitSlackSections(slackText(text, format), mrkdwn).map((part) => ({
    type: 'section',
    text: mrkdwn ? { type: 'mrkdwn', text: part } : { type: 'plain_text', text: part, emoji: false },
  }));
  if (buttons.length === 0) return blocks;
  if (buttons.length > SLACK_ACTIONS_MAX)
    throw new ChannelSendError(
      'malformed',
      `Slack actions block: ${buttons.length} buttons, over ${SLACK_ACTIONS_MAX}`,
    );
  const elements = buttons.map((button): slackTypes.Button => {
    const actionId = `${SLACK_ACTION_PREFIX}${button.action}`;
    if (actionId.length > SLACK_ACTION_ID_MAX || button.arg.length > SLACK_BUTTON_VALUE_MAX) {
      throw new ChannelSendError(
        'malformed',
        `Slack button ${actionId}: action_id over ${SLACK_ACTION_ID_MAX} or value over ${SLACK_BUTTON_VALUE_MAX} characters`,
      );
    }
    return {
      type: 'button',
      action_id: actionId,
      value: button.arg,
      text: { type: 'plain_text', text: button.label, emoji: false },
      ...(isDanger(button.action) ? { style: 'danger' as const } : {}),
    };
  });
  blocks.push({ type: 'actions', elements });
  return blocks;
}

/** A body as Slack text: `markdown` rendered as mrkdwn, `plain` escaped as it is. */
function slackText(text: string, format: 'plain' | 'markdown'): string {
  return format === 'markdown' ? toSlackMrkdwn(text) : escapeSlackText(text);
}

/** Buttons shown red on Slack and Discord: the ones that stop or refuse. */
export function isDanger(action: string): boolean {
  return action === 'stop' || action === 'deny';
}

function redactAll(text: string, secrets: readonly string[]): string {
  return secrets.reduce((out, secret) => (secret ? out.split(secret).join('[token]') : out), text);
}
