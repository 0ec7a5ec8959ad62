/**
 * The Telegram channel: grammY long polling through @grammyjs/runner, plain-text replies to the
 * originating message. Bot API: https://core.telegram.org/bots/api
 */
import { autoRetry } from '@grammyjs/auto-retry';
import { run, sequentialize, type RunnerHandle } from '@grammyjs/runner';
import { Bot, GrammyError, HttpError, InputFile } from 'grammy';
import type { Update } from 'grammy/types';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import {
  ChannelSendError,
  type ChannelAdapter,
  type ChannelState,
  type ConnectionLease,
  type ConversationMover,
  type IncomingAttachment,
  type InboundHandler,
  type InboundMessage,
  type InboundInbox,
  type MessageEdit,
  type OutboundDocument,
  type OutboundMessage,
  type PressHandler,
} from '../types.js';
import { AttachmentDownloadError, fetchDownload, networkDownloadFailure } from '../download.js';
import { ChannelInbox } from '../inbox.js';
import {
  normalizeTelegramAlbum,
  normalizeTelegramUpdate,
  telegramDedupeKey,
  type TelegramFileRef,
} from './normalize.js';
import { ALBUM_WAIT_MS, AlbumCollector } from './albums.js';
import { safeErrorMessage } from '../../core/logger.js';
import { toTelegramHtml } from '../../delivery/chat-markdown.js';

/** Longest message text, in UTF-16 code units (Bot API sendMessage `text`: 1-4096 characters). */
export const TELEGRAM_MAX_MESSAGE_LENGTH = 4096;
/** grammY's default API root. */
/**
 * Largest file a bot may send, in bytes (Bot API "Sending files": "50 MB max size for other
 * files" sent as multipart/form-data).
 */
export const TELEGRAM_MAX_DOCUMENT_BYTES = 50 * 1024 * 1024;

/** Longest caption, in UTF-16 code units (Bot API sendDocument `caption`: 0-1024 characters). */
const TELEGRAM_MAX_CAPTION_LENGTH = 1024;

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
  /** Where presses of inline-keyboard buttons go. @default none: a press is answered "not available" */
  presses?: PressHandler | undefined;
  /**
   * Messages handled at once, not behind their conversation's earlier ones still being handled
   * (`/stop`, `/cancel` while a launch downloads its files). @default none
   */
  overtakes?: ((message: InboundMessage) => boolean) | undefined;
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
  private runner: RunnerHandle | undefined;
  private state: ChannelState = { state: 'stopped' };
  private stopped = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly inbox: ChannelInbox<Update>;
  /** False while another node holds the fleet's lease on this token (no lease: always true). */
  private mayPoll = true;
  /** A 409 episode was already reported to the owner. */
  private conflictReported = false;

  constructor(private readonly options: TelegramAdapterOptions) {
    this.bot = new Bot(options.token, options.apiRoot ? { client: { apiRoot: options.apiRoot } } : {});
    this.inbox = new ChannelInbox<Update>({
      platform: 'telegram',
      inbox: options.inbox,
      logger: options.logger,
      // Not awaited by the replay: a long handler must not hold up polling; bot.catch logs failures.
      redeliver: (update) => this.bot.handleUpdate(update),
      compare: (a, b) => a.update_id - b.update_id,
      mayReplay: () => this.mayPoll,
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
    this.bot.api.config.use(async (prev, method, payload, signal) => {
      try {
        const result = await prev(method, payload, signal);
        if (method === 'getUpdates') {
          if (this.state.state === 'reconnecting' || this.state.state === 'failed') this.state = { state: 'connected' };
          this.conflictReported = false;
        }
        return result;
      } catch (err) {
        if (method === 'getUpdates' && !this.stopped && !signal?.aborted) {
          this.state = { state: 'reconnecting', reason: describe(err, this.options.token) };
          this.options.logger.warn(
            { channel: 'telegram', err: describe(err, this.options.token) },
            'telegram polling failed; retrying',
          );
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
        await this.inbox.record(
          updates.map((u) => ({ dedupeKey: telegramDedupeKey(botId, u.update_id), receivedAt, payload: u })),
        );
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
    if (this.options.commands?.length) {
      // The menu is a convenience: a refusal leaves the old one and baton still starts.
      await this.bot.api
        .setMyCommands([...this.options.commands], undefined, startSignal())
        .catch((err: unknown) =>
          logger.warn({ err: describe(err, this.options.token) }, 'Telegram refused the command menu (setMyCommands)'),
        );
    }
    const me = { id: this.bot.botInfo.id, username: this.bot.botInfo.username };
    const username = me.username;
    // The runner handles the updates of one getUpdates answer concurrently; one conversation
    // (a chat, or a forum topic in it) is handled strictly in arrival order, so `/codex …` then
    // `/stop`, or `/use B` then `/codex …`, act as sent. Other conversations stay concurrent.
    // `/stop`, `/cancel` and button presses are not queued: an earlier message of the conversation
    // may take long (a launch downloading its files), and they must be answered meanwhile.
    const overtakes = this.options.overtakes;
    // Before the conversation order: an album's parts are collected into one message first.
    const albums = new AlbumCollector(this.options.albumWaitMs ?? ALBUM_WAIT_MS);
    this.bot.use(albums.middleware());
    this.bot.use(
      sequentialize((ctx: { update: Update }) => {
        if (ctx.update.callback_query) return undefined;
        if (overtakes) {
          const message = normalizeTelegramUpdate(ctx.update, me, clock.now());
          if (message && overtakes(message)) return undefined;
        }
        return conversationKey(ctx);
      }),
    );
    this.bot.on('message', async (ctx) => {
      // A group upgraded to a supergroup: Telegram posts migrate_to_chat_id in the old chat and
      // migrate_from_chat_id in the new one. Acting on either (the move is idempotent) puts the
      // move ahead of later messages of the new chat, which share its conversation order.
      const { migrate_to_chat_id: movedTo, migrate_from_chat_id: movedFrom, chat } = ctx.message;
      const move =
        movedTo !== undefined ? [chat.id, movedTo] : movedFrom !== undefined ? [movedFrom, chat.id] : undefined;
      if (move) {
        logger.info(
          { channel: 'telegram', from: move[0], to: move[1] },
          'group upgraded to a supergroup; its conversation moves',
        );
        await this.options.conversations?.moveConversation('telegram', String(move[0]), String(move[1]));
      }
      const parts = albums.partsOf(ctx.update);
      const attach = (file: TelegramFileRef): IncomingAttachment => this.attachment(file);
      const message = parts
        ? normalizeTelegramAlbum(parts, me, clock.now(), attach)
        : normalizeTelegramUpdate(ctx.update, me, clock.now(), attach);
      const keys = (parts ?? [ctx.update]).map((u) => telegramDedupeKey(me.id, u.update_id));
      if (!message) {
        for (const key of keys) await this.inbox.forget(key);
        return;
      }
      // Every part is in flight while the album is handled, so the retry sweep never hands one out alone.
      const tracked = keys.reduceRight<() => Promise<void>>(
        (inner, key) => () => this.inbox.track(key, inner),
        () => handler(message),
      );
      await tracked();
    });
    this.bot.on('callback_query:data', async (ctx) => {
      const query = ctx.callbackQuery;
      const key = telegramDedupeKey(me.id, ctx.update.update_id);
      const press = parseCallbackData(query.data);
      const message = query.message;
      if (!press || !message || !this.options.presses) {
        await this.inbox.forget(key);
        await ctx.answerCallbackQuery({ text: 'This button no longer does anything.' }).catch(() => undefined);
        return;
      }
      let answered = false;
      const presses = this.options.presses;
      await this.inbox.track(key, () =>
        presses({
          platform: 'telegram',
          dedupeKey: key,
          chatId: String(message.chat.id),
          ...(message.is_topic_message && message.message_thread_id !== undefined
            ? { threadId: String(message.message_thread_id) }
            : {}),
          messageId: String(message.message_id),
          senderId: String(query.from.id),
          isDirect: message.chat.type === 'private',
          action: press.action,
          arg: press.arg,
          receivedAt: clock.now(),
          answer: async (text) => {
            if (answered) return;
            answered = true;
            // A replayed press (after a restart) is too old to answer: Telegram refuses it, nothing else depends on it.
            await ctx
              .answerCallbackQuery({ text: text.slice(0, CALLBACK_ANSWER_MAX_CHARS) })
              .catch((err: unknown) =>
                logger.info(
                  { channel: 'telegram', err: describe(err, this.options.token) },
                  'could not answer a button press',
                ),
              );
          },
        }),
      );
    });
    this.bot.catch((err) => logger.error({ channel: 'telegram', err: err.error }, 'telegram update handler failed'));
    const lease = this.options.lease;
    if (lease) {
      // In a fleet only the lease holder polls (Telegram allows one getUpdates per token); a
      // standby takes over within the lease's expiry after the holder dies, and handles what the
      // dead holder stored but never answered.
      this.mayPoll = false;
      await lease.start({
        onAcquired: async () => {
          this.mayPoll = true;
          this.state = { state: 'connected' };
          await this.inbox.replay();
          if (!this.stopped) this.launchRunner();
        },
        onLost: async (reason) => {
          this.mayPoll = false;
          if (this.restartTimer) clearTimeout(this.restartTimer);
          this.state = { state: 'standby', reason };
          if (this.runner?.isRunning()) await this.runner.stop();
        },
      });
      const held = lease.state();
      if (held.state !== 'holding')
        this.state = {
          state: 'standby',
          reason:
            held.state === 'standby'
              ? `node ${held.holder} polls this bot; this node takes over if it stops`
              : `waiting for the fleet lease: ${held.reason}`,
        };
    } else {
      // Updates stored but never handled (a process died between storing and handling them) go
      // first, through the same sequentializer, so each conversation's order holds.
      await this.inbox.replay();
      this.launchRunner();
    }
    // A handling that failed on a database error (an outage) left its claim: hand it out again.
    this.inbox.startRetrying();
    if (this.mayPoll) {
      this.state = { state: 'connected' };
      logger.info({ channel: 'telegram', bot: username }, 'telegram connected');
    } else {
      logger.info({ channel: 'telegram', bot: username }, 'telegram on standby: another node polls this bot');
    }
  }

  private launchRunner(): void {
    if (!this.mayPoll) return;
    const runner = run(this.bot, {
      runner: {
        silent: true,
        retryInterval: 'exponential',
        maxRetryTime: 24 * 3600_000,
        fetch: { allowed_updates: ['message', 'callback_query'] },
      },
    });
    this.runner = runner;
    runner.task()?.catch((err: unknown) => {
      if (this.stopped) return;
      const conflict = err instanceof GrammyError && err.error_code === 409;
      const retryMs = conflict ? (this.options.conflictRetryMs ?? 60_000) : 300_000;
      const reason = conflict
        ? '409 Conflict: another process is polling this bot token (only one may); stop it, then baton resumes polling'
        : describe(err, this.options.token);
      if (!this.mayPoll) return;
      this.state = { state: 'failed', reason };
      this.options.logger.error({ channel: 'telegram', reason, retryInMs: retryMs }, 'telegram polling stopped');
      if (conflict && !this.conflictReported) {
        this.conflictReported = true;
        this.options.onConflict?.(reason);
      }
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
      open: async (signal) => {
        let path: string | undefined;
        try {
          // grammY types its abort signal with a polyfill's type; the platform's signal is compatible.
          path = (await this.bot.api.getFile(file.fileId, signal as Parameters<Bot['api']['getFile']>[1])).file_path;
        } catch (err) {
          throw getFileFailure(err, token);
        }
        if (!path) throw new AttachmentDownloadError('Telegram gave no file path for it', { transient: false });
        return fetchDownload(
          `${apiRoot ?? TELEGRAM_API_ROOT}/file/bot${token}/${path}`,
          signal ? { signal } : {},
          'Telegram',
          (text) => redact(text, token),
        );
      },
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.inbox.stop();
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.runner?.isRunning()) await this.runner.stop();
    await this.options.lease?.stop();
    this.state = { state: 'stopped' };
  }

  /**
   * Sends one part. A `markdown` part goes as Telegram HTML ({@link toTelegramHtml}, every
   * character of the text escaped); should Telegram still refuse to parse it ("can't parse
   * entities"), it is sent again as plain text: the words matter more than their formatting. A
   * `plain` part goes without `parse_mode`, so its text can never be read as markup.
   */
  async send(message: OutboundMessage): Promise<{ messageId: string }> {
    if (message.format !== 'markdown') return this.sendText(message, message.text, false);
    return this.withPlainFallback(message.text, (text, html) => this.sendText(message, text, html));
  }

  private async sendText(message: OutboundMessage, text: string, html: boolean): Promise<{ messageId: string }> {
    try {
      const sent = await this.bot.api.sendMessage(message.chatId, text, {
        ...(html ? { parse_mode: 'HTML' as const } : {}),
        link_preview_options: { is_disabled: true },
        ...(message.replyToMessageId
          ? { reply_parameters: { message_id: Number(message.replyToMessageId), allow_sending_without_reply: true } }
          : {}),
        ...(message.threadId ? { message_thread_id: Number(message.threadId) } : {}),
        ...(message.buttons?.length
          ? {
              reply_markup: {
                inline_keyboard: [
                  message.buttons.map((b) => ({ text: b.label, callback_data: callbackData(b.action, b.arg) })),
                ],
              },
            }
          : {}),
      });
      return { messageId: String(sent.message_id) };
    } catch (err) {
      throw classify(err, this.options.token);
    }
  }

  /**
   * Sends a file with `sendDocument` as multipart/form-data (grammY `InputFile`).
   *
   * @throws ChannelSendError `refused` for a file over {@link TELEGRAM_MAX_DOCUMENT_BYTES} (not
   *   sent at all), else as {@link send}.
   */
  async sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    if (document.content.length > TELEGRAM_MAX_DOCUMENT_BYTES) {
      throw new ChannelSendError(
        'refused',
        `Telegram sendDocument: ${document.filename} is ${document.content.length} bytes, over the Bot API's 50 MB limit`,
      );
    }
    try {
      const sent = await this.bot.api.sendDocument(
        document.chatId,
        new InputFile(document.content, document.filename),
        {
          ...(document.caption ? { caption: document.caption.slice(0, TELEGRAM_MAX_CAPTION_LENGTH) } : {}),
          ...(document.replyToMessageId
            ? { reply_parameters: { message_id: Number(document.replyToMessageId), allow_sending_without_reply: true } }
            : {}),
          ...(document.threadId ? { message_thread_id: Number(document.threadId) } : {}),
        },
      );
      return { messageId: String(sent.message_id) };
    } catch (err) {
      throw classify(err, this.options.token);
    }
  }

  /**
   * `editMessageText` on a message the bot sent (Bot API "Updating messages"). Telegram answers
   * 400 "message is not modified" when the text is what the message already says: that is the
   * wanted state, so it is success. A 429 of at most 5 s is waited out inline by the auto-retry
   * plugin, as for sends; a longer one is thrown with its `retry_after`.
   */
  async editMessage(edit: MessageEdit): Promise<void> {
    if (edit.format !== 'markdown') return this.editText(edit, edit.text, false);
    await this.withPlainFallback(edit.text, (text, html) => this.editText(edit, text, html));
  }

  /** Calls `attempt` with the part as HTML, then as the plain Markdown if Telegram cannot parse that. */
  private async withPlainFallback<T>(
    markdown: string,
    attempt: (text: string, html: boolean) => Promise<T>,
  ): Promise<T> {
    try {
      return await attempt(toTelegramHtml(markdown), true);
    } catch (err) {
      if (!(err instanceof ChannelSendError && err.kind === 'malformed' && /parse entities/i.test(err.message)))
        throw err;
      this.options.logger.warn(
        { err: err.message },
        'Telegram could not parse the HTML of a message; sending it as plain text',
      );
      return attempt(markdown, false);
    }
  }

  private async editText(edit: MessageEdit, text: string, html: boolean): Promise<void> {
    try {
      await this.bot.api.editMessageText(edit.chatId, Number(edit.messageId), text, {
        ...(html ? { parse_mode: 'HTML' as const } : {}),
        link_preview_options: { is_disabled: true },
        ...(edit.buttons?.length
          ? {
              reply_markup: {
                inline_keyboard: [
                  edit.buttons.map((b) => ({ text: b.label, callback_data: callbackData(b.action, b.arg) })),
                ],
              },
            }
          : {}),
      });
    } catch (err) {
      if (err instanceof GrammyError && err.error_code === 400 && /message is not modified/i.test(err.description))
        return;
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
  const message = ctx.update.message ?? ctx.update.edited_message ?? ctx.update.callback_query?.message;
  if (!message) return undefined;
  const topic =
    message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : '';
  return `${message.chat.id}:${topic}`;
}

/** Longest `callback_data`, in bytes (Bot API InlineKeyboardButton: 1-64 bytes). */
export const CALLBACK_DATA_MAX_BYTES = 64;
/** Longest `answerCallbackQuery` text, in characters (Bot API: 0-200 characters). */
const CALLBACK_ANSWER_MAX_CHARS = 200;

/**
 * A button's `callback_data`: `action:arg`.
 *
 * @throws ChannelSendError `malformed` when it is over 64 bytes (baton's actions and ids are far shorter).
 */
export function callbackData(action: string, arg: string): string {
  const data = `${action}:${arg}`;
  if (Buffer.byteLength(data, 'utf8') > CALLBACK_DATA_MAX_BYTES) {
    throw new ChannelSendError('malformed', `Telegram callback_data is over ${CALLBACK_DATA_MAX_BYTES} bytes: ${data}`);
  }
  return data;
}

/** Reads `action:arg` back from `callback_data`; undefined for data baton did not write. */
export function parseCallbackData(data: string): { action: string; arg: string } | undefined {
  const match = /^([a-z_]+):(.+)$/.exec(data);
  return match ? { action: match[1]!, arg: match[2]! } : undefined;
}

/** Maps grammY errors to send failures (Bot API "Making requests": error_code, parameters.retry_after in seconds). */
function classify(err: unknown, token: string): ChannelSendError {
  if (err instanceof ChannelSendError) return err;
  if (err instanceof GrammyError) {
    const message = redact(`Telegram ${err.method}: ${err.error_code} ${err.description}`, token);
    if (err.error_code === 429) {
      const seconds = err.parameters.retry_after ?? 30;
      return new ChannelSendError('rate_limited', message, { cause: err, retryAfterMs: seconds * 1000 });
    }
    // 5xx: Telegram's side; 401: the token was revoked or changed — a channel problem that the
    // owner fixes once, after which the pending messages should still go out.
    if (err.error_code >= 500 || err.error_code === 401)
      return new ChannelSendError('network', message, { cause: err });
    // Bot API: a group upgraded to a supergroup answers 400 with parameters.migrate_to_chat_id.
    const movedTo = err.parameters.migrate_to_chat_id;
    if (movedTo !== undefined)
      return new ChannelSendError('refused', message, { cause: err, movedToChatId: String(movedTo) });
    // A forum topic an admin closed (closeForumTopic): the chat's General topic still takes messages.
    if (err.error_code === 400 && /TOPIC_CLOSED/.test(err.description))
      return new ChannelSendError('refused', message, { cause: err, threadClosed: true });
    if (err.error_code === 400 && /too long|parse entities|text must be non-empty/i.test(err.description)) {
      return new ChannelSendError('malformed', message, { cause: err });
    }
    return new ChannelSendError('refused', message, { cause: err });
  }
  // The cause is dropped on purpose for network errors: it may carry the request URL, which holds the token.
  if (err instanceof HttpError)
    return new ChannelSendError('network', redact(`Telegram unreachable: ${err.message}`, token));
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
    if (err.error_code === 429)
      return new AttachmentDownloadError(what, {
        transient: true,
        retryAfterMs: (err.parameters.retry_after ?? 1) * 1000,
        cause: err,
      });
    if (err.error_code >= 500) return new AttachmentDownloadError(what, { transient: true, cause: err });
    if (/file is too big/i.test(err.description)) {
      return new AttachmentDownloadError('Telegram lets bots download files of at most 20 MB', {
        transient: false,
        fix: 'Send a smaller file, or put it in the repository.',
      });
    }
    if (/wrong file_id|file_id|temporarily unavailable|file reference/i.test(err.description)) {
      return new AttachmentDownloadError('Telegram no longer knows the file (its file reference expired)', {
        transient: false,
      });
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
