/**
 * The Telegram channel: grammY long polling through @grammyjs/runner, plain-text replies to the
 * originating message. Bot API: https://core.telegram.org/bots/api
 */
import { autoRetry } from '@grammyjs/auto-retry';
import { run, sequentialize, type RunnerHandle } from '@grammyjs/runner';
import { Bot, GrammyError, HttpError } from 'grammy';
import type { Update } from 'grammy/types';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { ChannelSendError, type ChannelAdapter, type ChannelState, type ConversationMover, type IncomingAttachment, type InboundHandler, type InboundInbox, type OutboundMessage } from '../types.js';
import { AttachmentDownloadError, fetchDownload, networkDownloadFailure } from '../download.js';
import { ChannelInbox } from '../inbox.js';
import { normalizeTelegramUpdate, telegramDedupeKey, type TelegramFileRef } from './normalize.js';
import { safeErrorMessage } from '../../core/logger.js';

/** Longest message text, in UTF-16 code units (Bot API sendMessage `text`: 1-4096 characters). */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
/** grammY's default API root. */
const TELEGRAM_API_ROOT = 'https://api.telegram.org';

/** Longest wait for each start-up call (getMe, deleteWebhook), in ms. */
const START_TIMEOUT_MS = 30_000;

/** grammY types its abort signal with a polyfill's type; the platform's signal is compatible. */
function startSignal(): Parameters<Bot['api']['getMe']>[0] {
  return AbortSignal.timeout(START_TIMEOUT_MS) as unknown as Parameters<Bot['api']['getMe']>[0];
}

/** Options of the {@link TelegramAdapter}. */
export interface TelegramAdapterOptions {
  token: string;
  /** A self-hosted Bot API server, e.g. `http://127.0.0.1:8081`. @default https://api.telegram.org */
  apiRoot?: string | undefined;
  clock: Clock;
  logger: Logger;
  /**
   * Where each `getUpdates` answer is stored before the runner asks for the next one (whose
   * `offset` confirms it to Telegram), and where updates left unhandled by a process that died are
   * found at start. @default none (an update fetched by a process that dies is lost)
   */
  inbox?: InboundInbox | undefined;
  /**
   * Told when a group is upgraded to a supergroup (the `migrate_to_chat_id` service message), so
   * the conversation follows it to the new chat id. @default none
   */
  conversations?: ConversationMover | undefined;
  /** Wait before polling again after a 409 Conflict (another poller on this token), in ms. @default 60_000 */
  conflictRetryMs?: number;
}

/** Telegram via grammY. */
export class TelegramAdapter implements ChannelAdapter {
  readonly platform = 'telegram' as const;
  readonly maxMessageLength = TELEGRAM_MAX_MESSAGE_LENGTH;
  private readonly bot: Bot;
  private runner: RunnerHandle | undefined;
  private state: ChannelState = { state: 'stopped' };
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly inbox: ChannelInbox<Update>;

  constructor(private readonly options: TelegramAdapterOptions) {
    this.bot = new Bot(options.token, options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {});
    this.inbox = new ChannelInbox<Update>({
      platform: 'telegram',
      inbox: options.inbox,
      logger: options.logger,
      // Not awaited by the replay: a long handler must not hold up polling; bot.catch logs failures.
      redeliver: (update) => this.bot.handleUpdate(update),
      compare: (a, b) => a.update_id - b.update_id,
    });
    // Short rate-limit waits are absorbed inline; longer ones go back to the outbox's schedule.
    // 5xx and network errors go straight back to the outbox schedule: an inline wait would hold up
    // every message behind this one.
    this.bot.api.config.use(autoRetry({ maxRetryAttempts: 1, maxDelaySeconds: 5, rethrowHttpErrors: true, rethrowInternalServerErrors: true }));
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      try {
        const result = await prev(method, payload, signal);
        if (method === 'getUpdates' && this.state.state === 'reconnecting') this.state = { state: 'connected' };
        return result;
      } catch (err) {
        if (method === 'getUpdates' && !this.stopped && !signal?.aborted) {
          this.state = { state: 'reconnecting', reason: describe(err, this.options.token) };
          this.options.logger.warn({ channel: 'telegram', err: describe(err, this.options.token) }, 'telegram polling failed; retrying');
        }
        throw err;
      }
    });
    // The inbox write sits inside the getUpdates call: the runner computes the next offset only
    // from an answer this returns, so no update is confirmed before it is stored. A failed write
    // fails the poll, and the runner fetches the same updates again.
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      const response = await prev(method, payload, signal);
      if (method === 'getUpdates' && this.inbox.enabled && response.ok && this.bot.isInited()) {
        const botId = this.bot.botInfo.id;
        const receivedAt = this.options.clock.now();
        const updates = response.result as unknown as Update[];
        await this.inbox.record(updates.map((u) => ({ dedupeKey: telegramDedupeKey(botId, u.update_id), receivedAt, payload: u })));
      }
      return response;
    });
  }

  /**
   * Checks the token (`getMe`), removes any webhook (long polling and webhooks exclude each
   * other), and starts polling.
   *
   * @throws ChannelSendError when the token is refused or the API is unreachable.
   */
  async start(handler: InboundHandler): Promise<void> {
    const { logger, clock } = this.options;
    try {
      // One bounded getMe instead of bot.init(), which retries network errors forever and would
      // hold up the service's start with no word (an unreachable TELEGRAM_API_ROOT).
      this.bot.botInfo = await this.bot.api.getMe(startSignal());
      await this.bot.api.deleteWebhook({ drop_pending_updates: false }, startSignal());
    } catch (err) {
      this.state = { state: 'failed', reason: describe(err, this.options.token) };
      throw classify(err, this.options.token);
    }
    const me = { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    const username = me.username;
    // The runner handles the updates of one getUpdates answer concurrently; one conversation
    // (a chat, or a forum topic in it) is handled strictly in arrival order, so `/codex …` then
    // `/stop`, or `/use B` then `/codex …`, act as sent. Other conversations stay concurrent.
    this.bot.use(sequentialize(conversationKey));
    this.bot.on('message', async (ctx) => {
      // A group upgraded to a supergroup: Telegram posts migrate_to_chat_id in the old chat and
      // migrate_from_chat_id in the new one. Acting on either (the move is idempotent) puts the
      // move ahead of later messages of the new chat, which share its conversation order.
      const { migrate_to_chat_id: movedTo, migrate_from_chat_id: movedFrom, chat } = ctx.message;
      const move = movedTo !== undefined ? [chat.id, movedTo] : movedFrom !== undefined ? [movedFrom, chat.id] : undefined;
      if (move) {
        logger.info({ channel: 'telegram', from: move[0], to: move[1] }, 'group upgraded to a supergroup; its conversation moves');
        await this.options.conversations?.moveConversation('telegram', String(move[0]), String(move[1]));
      }
      const message = normalizeTelegramUpdate(ctx.update, me, clock.now(), (file) => this.attachment(file));
      const key = telegramDedupeKey(me.id, ctx.update.update_id);
      if (!message) return this.inbox.forget(key);
      await this.inbox.track(key, () => handler(message));
    });
    this.bot.catch((err) => logger.error({ channel: 'telegram', err: err.error }, 'telegram update handler failed'));
    // Updates stored but never handled (a process died between storing and handling them) go
    // first, through the same sequentializer, so each conversation's order holds.
    await this.inbox.replay();
    this.launchRunner();
    // A handling that failed on a database error (an outage) left its claim: hand it out again.
    this.inbox.startRetrying();
    this.state = { state: 'connected' };
    logger.info({ channel: 'telegram', bot: username }, 'telegram connected');
  }

  private launchRunner(): void {
    const runner = run(this.bot, { runner: { silent: true, retryInterval: 'exponential', maxRetryTime: 24 * 3600_000, fetch: { allowed_updates: ['message'] } } });
    this.runner = runner;
    runner.task()?.catch((err: unknown) => {
      if (this.stopped) return;
      const conflict = err instanceof GrammyError && err.error_code === 409;
      const retryMs = conflict ? (this.options.conflictRetryMs ?? 60_000) : 300_000;
      const reason = conflict
        ? '409 Conflict: another process is polling this bot token (only one may); stop it, then baton resumes polling'
        : describe(err, this.options.token);
      this.state = { state: 'failed', reason };
      this.options.logger.error({ channel: 'telegram', reason, retryInMs: retryMs }, 'telegram polling stopped');
      this.restartTimer = setTimeout(() => {
        if (!this.stopped) this.launchRunner();
      }, retryMs);
      this.restartTimer.unref();
    });
  }

  /**
   * A file of a message, downloaded only when a launch asks for it: grammY's `getFile`, then a
   * streamed GET of `<api root>/file/bot<token>/<file_path>` (Bot API "getFile"; files over 20 MB
   * cannot be downloaded by bots). Not @grammyjs/files 1.2.0: its Node download is https-only (no
   * self-hosted or loopback Bot API server) and streams an error page as if it were the file.
   * Errors never carry the token, which the URL holds.
   */
  private attachment(file: TelegramFileRef): IncomingAttachment {
    const { token, apiRoot } = this.options;
    return {
      name: file.name,
      sizeBytes: file.sizeBytes,
      open: async () => {
        let path: string | undefined;
        try {
          path = (await this.bot.api.getFile(file.fileId)).file_path;
        } catch (err) {
          throw getFileFailure(err, token);
        }
        if (!path) throw new AttachmentDownloadError('Telegram gave no file path for it', { transient: false });
        return fetchDownload(`${apiRoot ?? TELEGRAM_API_ROOT}/file/bot${token}/${path}`, {}, 'Telegram', (text) => redact(text, token));
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.inbox.stop();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.runner?.isRunning()) await this.runner.stop();
    this.state = { state: 'stopped' };
  }

  async send(message: OutboundMessage): Promise<{ messageId: string }> {
    try {
      const sent = await this.bot.api.sendMessage(message.chatId, message.text, {
        // No parse_mode: plain text, so user content can never break formatting.
        link_preview_options: { is_disabled: true },
        ...(message.replyToMessageId
          ? { reply_parameters: { message_id: Number(message.replyToMessageId), allow_sending_without_reply: true } }
          : {}),
        ...(message.threadId ? { message_thread_id: Number(message.threadId) } : {}),
      });
      return { messageId: String(sent.message_id) };
    } catch (err) {
      throw classify(err, this.options.token);
    }
  }

  status(): ChannelState {
    return this.state;
  }
}

/**
 * The conversation an update belongs to, `chat:topic` (topic empty outside forum topics), or
 * undefined for updates without a chat (handled without ordering).
 */
export function conversationKey(ctx: { update: Update }): string | undefined {
  const message = ctx.update.message ?? ctx.update.edited_message;
  if (!message) return undefined;
  const topic = message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : '';
  return `${message.chat.id}:${topic}`;
}

/** Maps grammY errors to send failures (Bot API "Making requests": error_code, parameters.retry_after in seconds). */
function classify(err: unknown, token: string): ChannelSendError {
  if (err instanceof GrammyError) {
    const message = redact(`Telegram ${err.method}: ${err.error_code} ${err.description}`, token);
    if (err.error_code === 429) {
      const seconds = err.parameters.retry_after ?? 30;
      return new ChannelSendError('rate_limited', message, { cause: err, retryAfterMs: seconds * 1000 });
    }
    // 5xx: Telegram's side; 401: the token was revoked or changed — a channel problem that the
    // owner fixes once, after which the pending messages should still go out.
    if (err.error_code >= 500 || err.error_code === 401) return new ChannelSendError('network', message, { cause: err });
    // Bot API: a group upgraded to a supergroup answers 400 with parameters.migrate_to_chat_id.
    const movedTo = err.parameters.migrate_to_chat_id;
    if (movedTo !== undefined) return new ChannelSendError('refused', message, { cause: err, movedToChatId: String(movedTo) });
    if (err.error_code === 400 && /too long|parse entities|text must be non-empty/i.test(err.description)) {
      return new ChannelSendError('malformed', message, { cause: err });
    }
    return new ChannelSendError('refused', message, { cause: err });
  }
  // The cause is dropped on purpose for network errors: it may carry the request URL, which holds the token.
  if (err instanceof HttpError) return new ChannelSendError('network', redact(`Telegram unreachable: ${err.message}`, token));
  return new ChannelSendError('network', redact(err instanceof Error ? err.message : String(err), token));
}

/**
 * A failed `getFile` as a download failure (Bot API "getFile": bots download files of at most
 * 20 MB, answered 400 "file is too big"; a file id Telegram no longer knows answers 400 "wrong
 * file_id or the file is temporarily unavailable"). 429 and 5xx are retried; grammY's HttpError is
 * the network.
 */
function getFileFailure(err: unknown, token: string): AttachmentDownloadError {
  if (err instanceof GrammyError) {
    const what = redact(`Telegram getFile answered ${err.error_code} ${err.description}`, token);
    if (err.error_code === 429) return new AttachmentDownloadError(what, { transient: true, retryAfterMs: (err.parameters.retry_after ?? 1) * 1000, cause: err });
    if (err.error_code >= 500) return new AttachmentDownloadError(what, { transient: true, cause: err });
    if (/file is too big/i.test(err.description)) {
      return new AttachmentDownloadError('Telegram lets bots download files of at most 20 MB', { transient: false, fix: 'Send a smaller file, or put it in the repository.' });
    }
    if (/wrong file_id|file_id|temporarily unavailable|file reference/i.test(err.description)) {
      return new AttachmentDownloadError('Telegram no longer knows the file (its file reference expired)', { transient: false });
    }
    return new AttachmentDownloadError(what, { transient: false, cause: err });
  }
  if (err instanceof HttpError) return networkDownloadFailure(err.error, (text) => redact(text, token));
  return networkDownloadFailure(err, (text) => redact(text, token));
}

function describe(err: unknown, token: string): string {
  if (err instanceof GrammyError) return redact(`${err.error_code} ${err.description}`, token);
  return redact(safeErrorMessage(err), token);
}

/** The bot token is part of every Bot API URL; never let it into a message or log line. */
function redact(text: string, token: string): string {
  return token ? text.split(token).join('[token]') : text;
}
