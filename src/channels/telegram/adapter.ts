/**
 * The Telegram channel: grammY long polling through @grammyjs/runner, plain-text replies to the
 * originating message. Bot API: https://core.telegram.org/bots/api
 *
 * The adapter composes the operations, each in its own file: polling.ts (the long poll, the
 * inbox write, the fleet lease), receive.ts (messages), presses.ts (button presses), send.ts,
 * edit.ts (the live status) and files.ts (files in and out).
 */
import { autoRetry } from '@grammyjs/auto-retry';
import { Bot } from 'grammy';
import type { Update } from 'grammy/types';
import type { AdapterBaseOptions } from '../factory.js';
import { ChannelInbox } from '../inbox.js';
import type {
  ChannelAdapter,
  ChannelState,
  ConnectionLease,
  ConversationMover,
  InboundHandler,
  MessageEdit,
  OutboundDocument,
  OutboundMessage,
} from '../types.js';
import type { ALBUM_WAIT_MS } from './albums.js';
import { editTelegramMessage } from './edit.js';
import { classifyTelegramError, describeTelegramError } from './errors.js';
import { sendTelegramDocument, telegramAttachment } from './files.js';
import { TelegramPolling } from './polling.js';
import { receiveTelegramPresses } from './presses.js';
import { receiveTelegramMessages } from './receive.js';
import { sendTelegramMessage, TELEGRAM_MAX_MESSAGE_LENGTH, type TelegramSendContext } from './send.js';

export { TELEGRAM_MAX_MESSAGE_LENGTH } from './send.js';
export { TELEGRAM_MAX_DOCUMENT_BYTES } from './files.js';
export { CALLBACK_DATA_MAX_BYTES, callbackData, parseCallbackData } from './buttons.js';
export { conversationKey } from './receive.js';

/** Longest wait for each start-up call (getMe, deleteWebhook, setMyCommands), in ms. */
const START_TIMEOUT_MS = 30_000;

/** grammY types its abort signal with a polyfill's type; the platform's signal is compatible. */
function startSignal(): Parameters<Bot['api']['getMe']>[0] {
  return AbortSignal.timeout(START_TIMEOUT_MS) as unknown as Parameters<Bot['api']['getMe']>[0];
}

/**
 * Options of the {@link TelegramAdapter}. The inbox keeps each `getUpdates` answer before the
 * runner asks for the next one (whose `offset` confirms it to Telegram), and updates left
 * unhandled by a process that died are found there at start; without one, an update fetched by a
 * process that dies is lost.
 */
export interface TelegramAdapterOptions extends AdapterBaseOptions {
  token: string;
  /** A self-hosted Bot API server, e.g. `http://127.0.0.1:8081`. @default https://api.telegram.org */
  apiRoot?: string | undefined;
  /**
   * Told when a group is upgraded to a supergroup (the `migrate_to_chat_id` service message), so
   * the conversation follows it to the new chat id. @default none
   */
  conversations?: ConversationMover | undefined;
  /**
   * How long to wait for an album's next part (updates sharing `media_group_id`) before the album
   * is handled as one message, in ms. @default {@link ALBUM_WAIT_MS}
   */
  albumWaitMs?: number;
  /** Wait before polling again after a 409 Conflict (another poller on this token), in ms. @default 60_000 */
  conflictRetryMs?: number;
  /**
   * The fleet's lease on this bot token's long poll: this process polls only while it
   * holds it, and stands by otherwise. @default none (always poll)
   */
  lease?: ConnectionLease | undefined;
  /**
   * Told once per episode when Telegram answers 409 Conflict although this process holds the
   * fleet's lease (a poller outside the fleet uses the token). @default none
   */
  onConflict?: ((reason: string) => void) | undefined;
  /**
   * The command menu registered with `setMyCommands` at start (Bot API BotCommand). A refusal is
   * logged, never fatal. @default none (the menu is left as it is)
   */
  commands?: readonly { command: string; description: string }[] | undefined;
}

/** Telegram via grammY. */
export class TelegramAdapter implements ChannelAdapter {
  readonly platform = 'telegram' as const;
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE_LENGTH;
  private readonly bot: Bot;
  private readonly inbox: ChannelInbox<Update>;
  private readonly polling: TelegramPolling;
  private readonly sending: TelegramSendContext;

  constructor(private readonly options: TelegramAdapterOptions) {
    this.bot = new Bot(options.token, options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {});
    this.inbox = new ChannelInbox<Update>({
      platform: 'telegram',
      inbox: options.inbox,
      logger: options.logger,
      // Not awaited by the replay: a long handler must not hold up polling; bot.catch logs failures.
      redeliver: (update) => this.bot.handleUpdate(update),
      compare: (a, b) => a.update_id - b.update_id,
      mayReplay: () => this.polling.mayPoll,
    });
    // Short rate-limit waits are absorbed inline; longer ones go back to the outbox's schedule.
    // 5xx and network errors go straight back to the outbox schedule: an inline wait would hold up
    // every message behind this one.
    this.bot.api.config.use(
      autoRetry({
        maxRetryAttempts: 1,
        maxDelaySeconds: 5,
        rethrowHttpErrors: true,
        rethrowInternalServerErrors: true,
      }),
    );
    this.polling = new TelegramPolling(this.bot, this.inbox, options);
    this.sending = { bot: this.bot, token: options.token, logger: options.logger };
  }

  /**
   * Checks the token (`getMe`), removes any webhook (long polling and webhooks exclude each
   * other), registers the command menu, and starts polling.
   *
   * @throws ChannelSendError when the token is refused or the API is unreachable.
   */
  async start(handler: InboundHandler): Promise<void> {
    const { logger, clock, token, apiRoot } = this.options;
    await this.checkToken();
    const me = { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    const context = { bot: this.bot, me, clock, logger, inbox: this.inbox };
    receiveTelegramMessages(
      context,
      this.options,
      (file) => telegramAttachment(this.bot, file, token, apiRoot),
      handler,
    );
    receiveTelegramPresses(context, this.options.presses, token);
    this.bot.catch((err) => logger.error({ channel: 'telegram', err: err.error }, 'telegram update handler failed'));
    await this.polling.start(me.username);
  }

  /** `getMe`, `deleteWebhook` and the command menu, each bounded by {@link START_TIMEOUT_MS}. */
  private async checkToken(): Promise<void> {
    const { token, logger, commands } = this.options;
    try {
      // One bounded getMe instead of bot.init(), which retries network errors forever and would
      // hold up the service's start with no word (an unreachable TELEGRAM_API_ROOT).
      this.bot.botInfo = await this.bot.api.getMe(startSignal());
      await this.bot.api.deleteWebhook({ drop_pending_updates: false }, startSignal());
    } catch (err) {
      this.polling.state = { state: 'failed', reason: describeTelegramError(err, token) };
      throw classifyTelegramError(err, token);
    }
    if (commands?.length) {
      // The menu is a convenience: a refusal leaves the old one and baton still starts.
      await this.bot.api
        .setMyCommands([...commands], undefined, startSignal())
        .catch((err: unknown) =>
          logger.warn({ err: describeTelegramError(err, token) }, 'Telegram refused the command menu (setMyCommands)'),
        );
    }
  }

  async stop(): Promise<void> {
    await this.polling.stop();
  }

  /** Sends one part; see {@link sendTelegramMessage}. */
  send(message: OutboundMessage): Promise<{ messageId: string }> {
    return sendTelegramMessage(this.sending, message);
  }

  /** Sends a file; see {@link sendTelegramDocument}. */
  sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    return sendTelegramDocument(this.bot, document, this.options.token);
  }

  /** Edits a message the bot sent; see {@link editTelegramMessage}. */
  editMessage(edit: MessageEdit): Promise<void> {
    return editTelegramMessage(this.sending, edit);
  }

  status(): ChannelState {
    return this.polling.state;
  }
}
