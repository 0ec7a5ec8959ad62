/**
 * The Slack channel: Bolt for JavaScript over Socket Mode (app-level token) or the HTTP Events API
 * (signing secret + port), plain-text replies in the request's thread. Slack API facts: "Events
 * API" (ack within 3 seconds; retries carry `x-slack-retry-num`), "Verifying requests from Slack"
 * (HMAC signature, timestamps older than 5 minutes refused — done by Bolt's HTTPReceiver),
 * "Socket Mode" (`apps.connections.open`), `auth.test`, `chat.postMessage`, `conversations.replies`.
 *
 * The adapter composes the operations, each in its own file: receive.ts (the app, the inbox,
 * the conversation order), presses.ts, thread.ts (a reply's run), socket.ts (reconnection),
 * send.ts (send and edit), buttons.ts and files.ts (files in and out).
 */
import { webApi, type App } from '@slack/bolt';
import { ConversationQueue } from '../conversation-queue.js';
import type { AdapterBaseOptions } from '../factory.js';
import type { ChannelInbox } from '../inbox.js';
import type {
  ChannelAdapter,
  ChannelState,
  InboundHandler,
  MessageEdit,
  OutboundDocument,
  OutboundMessage,
} from '../types.js';
import { boltLogger } from './bolt-logger.js';
import { classifySlackError } from './errors.js';
import { sendSlackDocument, slackAttachment } from './files.js';
import type { SlackStored } from './presses.js';
import { createSlackApp, type SlackTransport } from './receive.js';
import { editSlackMessage, SLACK_MAX_MESSAGE_LENGTH, sendSlackMessage } from './send.js';
import { SocketWatch } from './socket.js';

export { SLACK_ACTION_PREFIX, slackBlocks } from './buttons.js';
export { isDanger } from '../button-style.js';
export { SLACK_EVENTS_PATH, type SlackTransport } from './receive.js';
export { SLACK_MAX_MESSAGE_LENGTH } from './send.js';

/** Longest wait for Bolt to stop (close the socket or the HTTP server), in ms. */
const STOP_TIMEOUT_MS = 5_000;

/**
 * Options of the {@link SlackAdapter}. The inbox keeps each event meant for baton before Slack is
 * told it arrived (the HTTP answer or the Socket Mode ack), and events left unhandled by a
 * process that died are found there at start; without one, an event acknowledged by a process
 * that dies before handling it is lost.
 */
export interface SlackAdapterOptions extends AdapterBaseOptions {
  /** Bot token (`xoxb-…`). */
  token: string;
  transport: SlackTransport;
  /** Web API base URL, e.g. a proxy. @default https://slack.com/api/ */
  apiUrl?: string | undefined;
  /** Longest wait for the connection at start, in ms. @default 30_000 */
  startTimeoutMs?: number;
}

/** Slack via Bolt. */
export class SlackAdapter implements ChannelAdapter {
  readonly platform = 'slack' as const;
  readonly maxMessageLength = SLACK_MAX_MESSAGE_LENGTH;
  private readonly secrets: string[];
  private readonly client: webApi.WebClient;
  private app: App | undefined;
  private state: ChannelState = { state: 'stopped' };
  private readonly conversations = new ConversationQueue();
  private readonly socket: SocketWatch;
  private inbox: ChannelInbox<SlackStored> | undefined;

  constructor(private readonly options: SlackAdapterOptions) {
    const { transport } = options;
    this.secrets = [options.token, transport.kind === 'socket' ? transport.appToken : transport.signingSecret];
    this.client = new webApi.WebClient(options.token, this.clientOptions());
    this.socket = new SocketWatch({
      logger: options.logger,
      secrets: this.secrets,
      running: () => this.app !== undefined,
      setState: (state) => {
        this.state = state;
      },
    });
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
      const { app, inbox } = createSlackApp(
        {
          ...this.options,
          client: this.client,
          clientOptions: this.clientOptions(),
          secrets: this.secrets,
          conversations: this.conversations,
          attach: (file) => slackAttachment(file, this.options.token, this.options.apiUrl, this.secrets),
          watchSocket: (receiver) => this.socket.watch(receiver),
        },
        bot,
        handler,
      );
      this.inbox = inbox;
      await this.inbox.replaySafely();
      await withTimeout(app.start(), this.options.startTimeoutMs ?? 30_000, 'Slack connection').catch(
        async (err: unknown) => {
          await app.stop().catch(() => undefined);
          throw err;
        },
      );
      this.app = app;
      this.inbox.startRetrying();
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
    this.socket.stop();
    if (app) await withTimeout(app.stop(), STOP_TIMEOUT_MS, 'Slack shutdown');
  }

  /** Shares one file in the target's thread; see {@link sendSlackDocument}. */
  sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    return sendSlackDocument(this.client, document, this.secrets);
  }

  /** Posts one message; see {@link sendSlackMessage}. */
  send(message: OutboundMessage): Promise<{ messageId: string }> {
    return sendSlackMessage(this.client, message, this.secrets);
  }

  /** Updates a message the bot posted; see {@link editSlackMessage}. */
  editMessage(edit: MessageEdit): Promise<void> {
    return editSlackMessage(this.client, edit, this.secrets);
  }

  status(): ChannelState {
    return this.state;
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
