/**
 * A fake Telegram Bot API server on 127.0.0.1 for the real grammY client
 * (`new Bot(token, { client: { apiRoot: fake.url } })`). grammY 1.46 calls
 * `POST {apiRoot}/bot{token}/{method}` with a JSON body (grammy/out/core/client.js
 * `defaultBuildUrl`, `createJsonPayload`) over a keep-alive agent, and treats `{ok:false}`
 * bodies as `GrammyError`s whatever the HTTP status.
 *
 * Bot API semantics kept (https://core.telegram.org/bots/api): `getUpdates` long polling
 * (`offset` confirms every update with a smaller id, negative `offset` keeps only the last
 * `-offset`; `timeout` seconds hold the request until an update arrives; `limit` 1–100;
 * `allowed_updates` is remembered, `[]` meaning all but `chat_member`, `message_reaction`,
 * `message_reaction_count`); a second `getUpdates` ends a pending one with 409 Conflict;
 * method names are case-insensitive; message ids count per chat; `sendMessage` rejects empty or
 * over-4096-character text and a missing reply target (unless `allow_sending_without_reply`).
 * `sendDocument` takes multipart/form-data only (RFC 7578; parsed here leniently about header
 * spacing and filename quoting, as Telegram is: grammY writes `content-disposition:form-data;
 * name="x";filename=y`, which Node 20's undici `formData()` refuses):
 * the `document` field is a file part, or `attach://<name>` naming one (grammY's form); it refuses
 * an empty file, a file over 50 MB (Bot API "Sending files"), a caption over 1024 characters
 * and a missing filename.
 * `editMessageText` (chat_id + message_id) edits a message the bot sent in that chat: an unknown
 * message is "message to edit not found", another sender's "message can't be edited", empty or
 * over-4096-character text is refused as for sending, and the same text again is
 * "message is not modified" (all 400, as Telegram answers).
 * Inline keyboards (issue #14): `sendMessage` checks `reply_markup.inline_keyboard` (rows of
 * buttons with a non-empty `text` and exactly one action; `callback_data` 1-64 bytes, Bot API
 * InlineKeyboardButton) and keeps it on the message; {@link FakeTelegram.pressButton} queues the
 * `callback_query` update a press makes (handed out only when `allowed_updates` lets it, as
 * Telegram does); `answerCallbackQuery` accepts each query id once ("query is too old … or query
 * ID is invalid" otherwise) with `text` of at most 200 characters.
 * `parse_mode: HTML` text (sendMessage, editMessageText) is parsed as Telegram parses it
 * (./telegram-html.ts): malformed HTML is 400 "can't parse entities: …", and the 4096-character
 * limit counts the text after parsing. The message keeps the plain text and its entities, as
 * Telegram returns them; {@link SendMessageBody} and {@link RecordedEdit} carry that shown text
 * as `text` and the request's own as `sentText`. Other parse modes are refused (baton uses none).
 * `setMyCommands` checks each command (1-32 of a-z, 0-9, _) and description (1-256 characters)
 * and at most 100 commands.
 * Simplified: any chat id may be messaged (Telegram would say "chat not found").
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Chat, Message, MessageEntity, Update, User, UserFromGetMe } from 'grammy/types';
import { recordReceived } from './received.js';
import { EntityParseError, parseTelegramHtml } from './telegram-html.js';

/** A message a (fake) user sends to the bot; see {@link FakeTelegram.pushMessage}. */
export interface PushMessageInput {
  chatId: number;
  /** @default `'private'` for a positive `chatId`, `'group'` otherwise */
  chatType?: 'private' | 'group' | 'supergroup';
  from: { id: number; is_bot?: boolean; first_name?: string; username?: string };
  text: string;
  /** `message_id` of an earlier message of this chat (pushed or sent by the bot). */
  replyToMessageId?: number;
  /** @default a `bot_command` entity when `text` starts with `/`, like Telegram */
  entities?: MessageEntity[];
}

/** A document the bot sent (`sendDocument`), as received. */
export interface SentDocument {
  chat_id: string;
  filename: string;
  content: Buffer;
  caption?: string;
  /** The other form fields, JSON-parsed where they are JSON (`reply_parameters`). */
  fields: Record<string, unknown>;
  message_id: number;
}

/** Largest file a bot may send (Bot API "Sending files": 50 MB for other files), in bytes. */
export const TELEGRAM_SEND_FILE_MAX_BYTES = 50 * 1024 * 1024;

/** The body of a failed Bot API call (Bot API "Making requests"). */
export interface TelegramErrorBody {
  ok: false;
  error_code: number;
  description: string;
  /** `retry_after` is in seconds, as Telegram sends it. */
  parameters?: { retry_after?: number; migrate_to_chat_id?: number };
}

/** An injected failure; see {@link FakeTelegram.failNext}. */
export interface FailureSpec {
  /** HTTP status, e.g. 429, 500, 409. */
  status: number;
  /** @default `{ok:false, error_code: status, description: <Telegram's text for it>}` */
  body?: TelegramErrorBody | string;
  /** Only a call whose JSON body matches fails (the first such call). @default any call */
  when?: (body: Record<string, unknown>) => boolean;
}

/** The JSON body of a `sendMessage` call, as received. */
export interface SendMessageBody {
  chat_id: number | string;
  /** The text as Telegram shows it: after `parse_mode` parsing, without tags or entities. */
  text: string;
  /** The request's `text`, as sent (HTML under `parse_mode: HTML`). */
  sentText: string;
  [field: string]: unknown;
}

/** An accepted `editMessageText` call: its body and when the fake received it (ms since the epoch). */
export interface RecordedEdit {
  chat_id: number | string;
  message_id: number;
  /** As {@link SendMessageBody.text}. */
  text: string;
  sentText: string;
  atMs: number;
  [field: string]: unknown;
}

/** Any call the fake received with a valid token. */
export interface RecordedCall {
  /** Method name as sent, e.g. `getUpdates`. */
  method: string;
  body: Record<string, unknown>;
  /** HTTP status of the fake's answer (a 409 answer to a superseded long poll included). */
  status: number;
  /** When the fake received it, in ms since the epoch. */
  atMs: number;
}

/** A running fake; see {@link startFakeTelegram}. */
export interface FakeTelegram {
  /** `apiRoot` for grammY, e.g. `http://127.0.0.1:40123` (no trailing slash). */
  readonly url: string;
  /** What `getMe` returns. */
  readonly botUser: UserFromGetMe;
  readonly calls: readonly RecordedCall[];
  /** Bodies of accepted `sendMessage` calls, in order. */
  readonly sent: readonly SendMessageBody[];
  /** The Messages those calls returned, parallel to {@link sent} (with their text as last edited). */
  readonly sentMessages: readonly Message[];
  /** Accepted `editMessageText` calls, in order. */
  readonly edits: readonly RecordedEdit[];
  /** Queues a `message` update from a user; returns its `update_id`. */
  pushMessage(input: PushMessageInput): number;
  /** Queues any update as is; an already confirmed `update_id` is handed out once more. */
  pushUpdate(update: Update): number;
  /**
   * Queues an update this fake queued before (a message, a press) once more, as Telegram hands an
   * update out again when its confirmation was lost.
   *
   * @throws Error when no update with that id was queued.
   */
  redeliverUpdate(updateId: number): void;
  /**
   * Queues every update `push` adds and hands them out together: a pending long poll is answered
   * once, with all of them in one `getUpdates` result (as Telegram does when several messages
   * arrive between polls). Returns what `push` returns.
   */
  batch<T>(push: () => T): T;
  /**
   * Upgrades group `fromChatId` to supergroup `toChatId`, as Telegram does: from now on a send to
   * the old id fails with 400 and `parameters.migrate_to_chat_id`; with `announce`, the service
   * messages (`migrate_to_chat_id` in the old chat, `migrate_from_chat_id` in the new) are queued
   * as updates.
   */
  migrateGroup(fromChatId: number, toChatId: number, options?: { announce?: boolean; by?: number }): void;
  /**
   * Closes forum topic `threadId` of `chatId` (closeForumTopic by an admin): like the Bot API, a
   * `sendMessage` or `sendDocument` to it then fails with 400 "Bad Request: TOPIC_CLOSED".
   */
  closeTopic(chatId: number, threadId: number): void;
  /**
   * Calls `hook` once, synchronously, when a `getUpdates` arrives whose `offset` confirms
   * `updateId` (the moment Telegram forgets it), before that call is answered. For crash tests:
   * the hook can SIGKILL the poller right there.
   */
  onConfirm(updateId: number, hook: () => void): void;
  /**
   * The next call of `method` (the next one matching `failure.when`, if given) fails as given;
   * failures are queued per method, in order.
   */
  failNext(method: string, failure: FailureSpec): void;
  /** The next call of `method` (e.g. `getFile`) is answered as usual, but only after `holdMs` (a stalled server). */
  stallNext(method: string, holdMs: number): void;
  /** Documents accepted by `sendDocument`, in order. */
  readonly documents: readonly SentDocument[];
  /** Resolves with the first document matching `predicate` (already sent or later). */
  waitForDocument(predicate: (doc: SentDocument) => boolean, timeoutMs: number): Promise<SentDocument>;
  /** Resolves with the first sent body matching `predicate` (already sent or later). */
  waitForSent(predicate: (body: SendMessageBody) => boolean, timeoutMs: number): Promise<SendMessageBody>;
  /** The highest `update_id` queued so far (0 before any). */
  lastUpdateId(): number;
  /** Updates not yet confirmed through `offset`. */
  pendingUpdates(): number;
  /**
   * Stores a file users can send: `getFile` returns its `file_path`, and
   * `GET /file/bot<token>/<file_path>` its bytes. Like the Bot API, `getFile` refuses a file over
   * 20 MB ("Bad Request: file is too big").
   */
  addFile(bytes: Buffer): { file_id: string; file_unique_id: string; file_size: number };
  /**
   * Queues the `callback_query` a user's press of button `callbackData` under `message` (one the
   * bot sent) makes; returns its `update_id`.
   *
   * @throws Error when the message has no button with that `callback_data`.
   */
  pressButton(input: { from: { id: number; first_name?: string }; message: Message; callbackData: string }): number;
  /** Accepted `answerCallbackQuery` calls by query id. */
  readonly callbackAnswers: ReadonlyMap<string, { text?: string }>;
  /** Answers a pending long poll with `[]`, stops listening, drops connections. */
  close(): Promise<void>;
}

/** The Bot API's download limit for bots (https://core.telegram.org/bots/api#getfile), in bytes. */
export const TELEGRAM_GET_FILE_MAX_BYTES = 20 * 1024 * 1024;

/** Options of {@link startFakeTelegram}. */
export interface StartFakeTelegramOptions {
  /** The only accepted token; its digits before `:` become the bot's user id. */
  token: string;
  /** @default `baton_test_bot` */
  botUsername?: string;
  /** Clock for `date` fields, in ms since the epoch. @default Date.now */
  nowMs?: () => number;
}

interface Pending {
  update: Update;
  redelivery: boolean;
  delivered: boolean;
}
interface LongPoll {
  res: ServerResponse;
  call: RecordedCall;
  limit: number;
  timer: NodeJS.Timeout;
}
type Reply = { status: number; body: unknown };

const OFF_BY_DEFAULT = new Set(['chat_member', 'message_reaction', 'message_reaction_count']);
const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running',
  429: 'Too Many Requests: retry after 1',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
};

const ok = (result: unknown): Reply => ({ status: 200, body: { ok: true, result } });
const fail = (status: number, description: string, parameters?: TelegramErrorBody['parameters']): Reply => ({
  status,
  body: { ok: false, error_code: status, description, ...(parameters ? { parameters } : {}) },
});

/** Starts the fake on an ephemeral port of 127.0.0.1. */
export async function startFakeTelegram(options: StartFakeTelegramOptions): Promise<FakeTelegram> {
  const { token } = options;
  const nowS = (): number => Math.floor((options.nowMs ?? Date.now)() / 1000);
  const botUser: UserFromGetMe = {
    id: Number(/^(\d+):/.exec(token)?.[1] ?? 1),
    is_bot: true,
    first_name: 'Baton Test',
    username: options.botUsername ?? 'baton_test_bot',
    can_join_groups: true,
    can_read_all_group_messages: false,
    supports_inline_queries: false,
    can_connect_to_business: false,
    has_main_web_app: false,
    has_topics_enabled: false,
    allows_users_to_create_topics: false,
    can_manage_bots: false,
    supports_join_request_queries: false,
  };
  const calls: RecordedCall[] = [];
  const files = new Map<string, { bytes: Buffer; uniqueId: string; path: string }>();
  const sent: SendMessageBody[] = [];
  const documents: SentDocument[] = [];
  const documentWaiters = new Set<(doc: SentDocument) => boolean>();
  const edits: RecordedEdit[] = [];
  const sentMessages: Message[] = [];
  const failures = new Map<string, FailureSpec[]>();
  const stalls = new Map<string, number[]>();
  const closedTopics = new Set<string>();
  const topicClosed = (body: Record<string, unknown>): boolean =>
    body['message_thread_id'] !== undefined &&
    closedTopics.has(`${Number(body['chat_id'])}:${Number(body['message_thread_id'])}`);
  const chats = new Map<number, Chat>();
  const lastMessageId = new Map<number, number>();
  const messages = new Map<string, Message>();
  const sentWaiters = new Set<(body: SendMessageBody) => boolean>();
  let queue: Pending[] = [];
  let nextUpdateId = 1;
  let allowed: Set<string> | undefined;
  let poll: LongPoll | undefined;
  let commands: unknown[] = [];
  let batching = false;
  const migrated = new Map<number, number>();
  const confirmHooks: { updateId: number; hook: () => void }[] = [];
  const openQueries = new Set<string>();
  const callbackAnswers = new Map<string, { text?: string }>();

  const storeMessage = (chatId: number, build: (id: number) => Message): Message => {
    const id = (lastMessageId.get(chatId) ?? 0) + 1;
    lastMessageId.set(chatId, id);
    const message = build(id);
    messages.set(`${chatId}:${id}`, message);
    return message;
  };
  const isAllowed = (u: Update): boolean => {
    const type = Object.keys(u).find((k) => k !== 'update_id') ?? '';
    return allowed ? allowed.has(type) : !OFF_BY_DEFAULT.has(type);
  };
  const take = (limit: number): Update[] => {
    queue = queue.filter((p) => isAllowed(p.update)); // Telegram would not have created them
    const batch = queue.slice(0, limit);
    for (const p of batch) p.delivered = true;
    return batch.map((p) => p.update);
  };
  const answerPoll = (updates: Update[] | undefined, reply?: Reply): void => {
    if (!poll) return;
    const { res, call, timer } = poll;
    poll = undefined;
    clearTimeout(timer);
    const r = reply ?? ok(updates ?? []);
    call.status = r.status;
    send(res, r);
  };
  const queued = new Map<number, Update>();
  const enqueue = (update: Update): number => {
    if (!queued.has(update.update_id)) queued.set(update.update_id, update);
    queue.push({ update, redelivery: update.update_id < nextUpdateId, delivered: false });
    nextUpdateId = Math.max(nextUpdateId, update.update_id + 1);
    if (!batching) flush();
    return update.update_id;
  };
  const flush = (): void => {
    if (!poll) return;
    const batch = take(poll.limit);
    if (batch.length > 0) answerPoll(batch);
  };

  const getUpdates = (body: Record<string, unknown>, res: ServerResponse, call: RecordedCall): Reply | undefined => {
    answerPoll(undefined, fail(409, STATUS_TEXT[409] ?? 'Conflict'));
    const offset = typeof body['offset'] === 'number' ? body['offset'] : undefined;
    for (const entry of [...confirmHooks]) {
      if (offset === undefined || offset <= entry.updateId) continue;
      confirmHooks.splice(confirmHooks.indexOf(entry), 1);
      entry.hook();
    }
    if (offset !== undefined && offset < 0) queue = queue.slice(offset);
    else if (offset !== undefined) {
      queue = queue.filter((p) => p.update.update_id >= offset || (p.redelivery && !p.delivered));
    }
    if (Array.isArray(body['allowed_updates'])) {
      const list = body['allowed_updates'].filter((t): t is string => typeof t === 'string');
      allowed = list.length > 0 ? new Set(list) : undefined;
    }
    const limit = Math.min(100, Math.max(1, typeof body['limit'] === 'number' ? body['limit'] : 100));
    const timeoutS = typeof body['timeout'] === 'number' ? body['timeout'] : 0;
    const batch = take(limit);
    if (batch.length > 0 || timeoutS <= 0) return ok(batch);
    const timer = setTimeout(() => answerPoll([]), timeoutS * 1000);
    poll = { res, call, limit, timer };
    res.on('close', () => {
      if (poll?.res === res) {
        clearTimeout(poll.timer);
        poll = undefined;
      }
    });
    return undefined;
  };

  /** The text Telegram shows for a `text` + `parse_mode`, or the refusal. */
  const shownText = (body: Record<string, unknown>): { text: string; entities?: MessageEntity[] } | Reply => {
    const raw = typeof body['text'] === 'string' ? body['text'] : '';
    const mode = body['parse_mode'];
    let shown: { text: string; entities?: MessageEntity[] } = {
      text: raw,
      ...(Array.isArray(body['entities']) ? { entities: body['entities'] as MessageEntity[] } : {}),
    };
    if (mode === 'HTML') {
      try {
        const parsed = parseTelegramHtml(raw);
        shown = {
          text: parsed.text,
          ...(parsed.entities.length > 0 ? { entities: parsed.entities as MessageEntity[] } : {}),
        };
      } catch (err) {
        if (err instanceof EntityParseError) return fail(400, `Bad Request: ${err.message}`);
        throw err;
      }
    } else if (mode !== undefined) {
      return fail(400, `Bad Request: unsupported parse_mode ${String(mode)} in fake-telegram`);
    }
    if (shown.text.trim() === '') return fail(400, 'Bad Request: message text is empty');
    return shown;
  };
  const isReply = (value: unknown): value is Reply => typeof value === 'object' && value !== null && 'status' in value;

  const sendMessage = (body: Record<string, unknown>): Reply => {
    const sentText = typeof body['text'] === 'string' ? body['text'] : '';
    const shown = shownText(body);
    if (isReply(shown)) return shown;
    const { text } = shown;
    if (text.length > 4096) return fail(400, 'Bad Request: message is too long');
    const chatId = Number(body['chat_id']);
    if (!Number.isSafeInteger(chatId)) return fail(400, 'Bad Request: chat not found');
    const movedTo = migrated.get(chatId);
    if (movedTo !== undefined)
      return fail(400, 'Bad Request: group chat was upgraded to a supergroup chat', { migrate_to_chat_id: movedTo });
    if (topicClosed(body)) return fail(400, 'Bad Request: TOPIC_CLOSED');
    const chat = chats.get(chatId) ?? defaultChat(chatId);
    const params = (body['reply_parameters'] ?? {}) as { message_id?: number; allow_sending_without_reply?: boolean };
    const replyId = params.message_id ?? (body['reply_to_message_id'] as number | undefined);
    const target = replyId === undefined ? undefined : messages.get(`${chatId}:${replyId}`);
    const withoutReply = params.allow_sending_without_reply === true || body['allow_sending_without_reply'] === true;
    if (replyId !== undefined && !target && !withoutReply)
      return fail(400, 'Bad Request: message to be replied not found');
    const markup = body['reply_markup'];
    if (markup !== undefined) {
      const problem = inlineKeyboardProblem(markup);
      if (problem) return fail(400, `Bad Request: ${problem}`);
    }
    const { id, is_bot, first_name, username } = botUser;
    const message = storeMessage(
      chatId,
      (message_id) =>
        ({
          ...(markup !== undefined ? { reply_markup: markup } : {}),
          message_id,
          from: { id, is_bot, first_name, username },
          chat,
          date: nowS(),
          text,
          ...(target ? { reply_to_message: { ...target, reply_to_message: undefined } } : {}),
          ...(shown.entities ? { entities: shown.entities } : {}),
          ...(body['link_preview_options'] ? { link_preview_options: body['link_preview_options'] } : {}),
        }) as Message,
    );
    const sentBody = { ...body, text, sentText } as SendMessageBody;
    sent.push(sentBody);
    sentMessages.push(message);
    for (const waiter of sentWaiters) waiter(sentBody);
    return ok(message);
  };

  const sendDocument = (body: Record<string, unknown>, form: FormPart[] | undefined): Reply => {
    if (!form) return fail(400, 'Bad Request: there is no document in the request');
    const field = form.find((p) => p.name === 'document');
    const ref = field?.filename === undefined ? field?.content.toString('utf8') : undefined;
    const file = ref?.startsWith('attach://') ? form.find((p) => p.name === ref.slice('attach://'.length)) : field;
    if (!file) return fail(400, 'Bad Request: there is no document in the request');
    if (file.filename === undefined) return fail(400, 'Bad Request: wrong file identifier/HTTP URL specified');
    if (file.filename === '') return fail(400, 'Bad Request: file name is missing');
    if (file.content.length === 0) return fail(400, 'Bad Request: file must be non-empty');
    if (file.content.length > TELEGRAM_SEND_FILE_MAX_BYTES) return fail(413, 'Request Entity Too Large');
    const caption = typeof body['caption'] === 'string' ? body['caption'] : undefined;
    if (caption !== undefined && caption.length > 1024) return fail(400, 'Bad Request: message caption is too long');
    if (topicClosed(body)) return fail(400, 'Bad Request: TOPIC_CLOSED');
    const chatId = Number(body['chat_id']);
    if (!Number.isSafeInteger(chatId)) return fail(400, 'Bad Request: chat not found');
    const chat = chats.get(chatId) ?? defaultChat(chatId);
    const { id, is_bot, first_name, username } = botUser;
    return { status: 0, body: { file, caption, chatId, chat, from: { id, is_bot, first_name, username } } };
  };
  const acceptDocument = async (reply: Reply, body: Record<string, unknown>): Promise<Reply> => {
    if (reply.status !== 0) return reply;
    const { file, caption, chatId, chat, from } = reply.body as {
      file: FormPart;
      caption?: string;
      chatId: number;
      chat: Chat;
      from: User;
    };
    const content = file.content;
    const message = storeMessage(
      chatId,
      (message_id) =>
        ({
          message_id,
          from,
          chat,
          date: nowS(),
          document: {
            file_id: `sent-doc-${message_id}`,
            file_unique_id: `sent-doc-u-${message_id}`,
            file_name: file.filename,
            file_size: content.length,
          },
          ...(caption ? { caption } : {}),
        }) as Message,
    );
    const doc: SentDocument = {
      chat_id: String(chatId),
      filename: file.filename ?? '',
      content,
      ...(caption !== undefined ? { caption } : {}),
      fields: body,
      message_id: message.message_id,
    };
    documents.push(doc);
    for (const waiter of documentWaiters) waiter(doc);
    return ok(message);
  };

  const editMessageText = (body: Record<string, unknown>): Reply => {
    if (body['inline_message_id'] !== undefined)
      return fail(400, 'Bad Request: fake-telegram edits chat messages only');
    const chatId = Number(body['chat_id']);
    const messageId = Number(body['message_id']);
    if (!Number.isSafeInteger(chatId)) return fail(400, 'Bad Request: chat not found');
    const sentText = typeof body['text'] === 'string' ? body['text'] : '';
    const shown = shownText(body);
    if (isReply(shown)) return shown;
    const { text } = shown;
    if (text.length > 4096) return fail(400, 'Bad Request: MESSAGE_TOO_LONG');
    const message = messages.get(`${chatId}:${messageId}`);
    if (!message) return fail(400, 'Bad Request: message to edit not found');
    if (message.from?.id !== botUser.id) return fail(400, "Bad Request: message can't be edited");
    if (message.text === text && JSON.stringify(message.entities ?? []) === JSON.stringify(shown.entities ?? [])) {
      return fail(
        400,
        'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
      );
    }
    (message as { text?: string }).text = text;
    if (shown.entities) (message as { entities?: MessageEntity[] }).entities = shown.entities;
    else delete (message as { entities?: MessageEntity[] }).entities;
    (message as { edit_date?: number }).edit_date = nowS();
    edits.push({
      ...body,
      chat_id: body['chat_id'] as number | string,
      message_id: messageId,
      text,
      sentText,
      atMs: Date.now(),
    });
    return ok(message);
  };

  const dispatch = (call: RecordedCall, res: ServerResponse): Reply | undefined => {
    const { body } = call;
    switch (call.method.toLowerCase()) {
      case 'getme':
        return ok(botUser);
      case 'getupdates':
        return getUpdates(body, res, call);
      case 'sendmessage':
        return sendMessage(body);
      case 'editmessagetext':
        return editMessageText(body);
      case 'deletewebhook':
        if (body['drop_pending_updates'] === true) queue = [];
        return ok(true);
      case 'getwebhookinfo':
        return ok({ url: '', has_custom_certificate: false, pending_update_count: queue.length });
      case 'setmycommands': {
        const list = Array.isArray(body['commands'])
          ? (body['commands'] as { command?: unknown; description?: unknown }[])
          : [];
        if (list.length > 100) return fail(400, 'Bad Request: BOT_COMMANDS_TOO_MUCH');
        for (const c of list) {
          if (typeof c.command !== 'string' || !/^[a-z0-9_]{1,32}$/.test(c.command))
            return fail(400, 'Bad Request: BOT_COMMAND_INVALID');
          if (typeof c.description !== 'string' || c.description.trim().length === 0 || c.description.length > 256)
            return fail(400, 'Bad Request: BOT_COMMAND_DESCRIPTION_INVALID');
        }
        commands = list;
        return ok(true);
      }
      case 'getmycommands':
        return ok(commands);
      case 'sendchataction':
      case 'close':
      case 'logout':
        return ok(true);
      case 'answercallbackquery': {
        const queryId = String(body['callback_query_id'] ?? '');
        if (!openQueries.has(queryId))
          return fail(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
        const text = body['text'];
        if (text !== undefined && (typeof text !== 'string' || text.length > 200))
          return fail(400, 'Bad Request: MESSAGE_TOO_LONG');
        openQueries.delete(queryId);
        callbackAnswers.set(queryId, typeof text === 'string' ? { text } : {});
        return ok(true);
      }
      case 'getfile': {
        const file = files.get(String(body['file_id']));
        if (!file) return fail(400, 'Bad Request: invalid file_id');
        if (file.bytes.length > TELEGRAM_GET_FILE_MAX_BYTES) return fail(400, 'Bad Request: file is too big');
        return ok({
          file_id: body['file_id'],
          file_unique_id: file.uniqueId,
          file_size: file.bytes.length,
          file_path: file.path,
        });
      }
      default:
        return fail(404, 'Not Found: method not found');
    }
  };

  const server = createServer((req, res) => {
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
    if (download) {
      const file = [...files.values()].find((f) => f.path === download[2]);
      res.writeHead(download[1] !== token ? 401 : file ? 200 : 404, { 'content-type': 'application/octet-stream' });
      res.end(download[1] === token && file ? file.bytes : undefined);
      return;
    }
    void readBody(req).then(
      async ({ parsed, form }) => {
        const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
        if (!match) return send(res, fail(404, 'Not Found'));
        const [, gotToken = '', method = ''] = match;
        if (gotToken !== token) return send(res, fail(401, 'Unauthorized'));
        if (parsed === undefined)
          return send(res, fail(400, 'Bad Request: fake-telegram reads JSON and multipart bodies only'));
        if (method.toLowerCase() === 'senddocument') {
          const call: RecordedCall = { method, body: parsed, status: 200, atMs: Date.now() };
          calls.push(call);
          const queued = failures.get('senddocument') ?? [];
          const index = queued.findIndex((f) => !f.when || f.when(parsed));
          const failure = index >= 0 ? queued.splice(index, 1)[0] : undefined;
          const reply = failure ? injected(failure) : await acceptDocument(sendDocument(parsed, form), parsed);
          call.status = reply.status;
          return send(res, reply);
        }
        if (form)
          return send(
            res,
            fail(400, `Bad Request: fake-telegram takes multipart only for sendDocument, got ${method}`),
          );
        const call: RecordedCall = { method, body: parsed, status: 200, atMs: Date.now() };
        calls.push(call);
        const stall = stalls.get(method.toLowerCase())?.shift();
        if (stall !== undefined) await new Promise((resolve) => setTimeout(resolve, stall).unref());
        if (res.destroyed) return;
        const queued = failures.get(method.toLowerCase()) ?? [];
        const index = queued.findIndex((f) => !f.when || f.when(parsed));
        const failure = index >= 0 ? queued.splice(index, 1)[0] : undefined;
        const reply = failure ? injected(failure) : dispatch(call, res);
        if (reply) {
          call.status = reply.status;
          send(res, reply);
        }
      },
      () => res.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    botUser,
    calls,
    sent,
    sentMessages,
    edits,
    addFile: (bytes) => {
      const n = files.size + 1;
      const file = { bytes, uniqueId: `unique${n}`, path: `documents/file_${n}` };
      files.set(`file-id-${n}`, file);
      return { file_id: `file-id-${n}`, file_unique_id: file.uniqueId, file_size: bytes.length };
    },
    pushMessage: (input) => {
      const type = input.chatType ?? (input.chatId > 0 ? 'private' : 'group');
      const from: User = { is_bot: false, first_name: 'Test', ...input.from };
      const chat = chatFor(input.chatId, type, from);
      chats.set(input.chatId, chat);
      const target =
        input.replyToMessageId === undefined ? undefined : messages.get(`${input.chatId}:${input.replyToMessageId}`);
      if (input.replyToMessageId !== undefined && !target) {
        throw new Error(`pushMessage: chat ${input.chatId} has no message ${input.replyToMessageId} to reply to`);
      }
      const command = /^\/\S+/.exec(input.text);
      const entities =
        input.entities ?? (command ? [{ type: 'bot_command', offset: 0, length: command[0].length }] : undefined);
      const message = storeMessage(
        input.chatId,
        (message_id) =>
          ({
            message_id,
            from,
            chat,
            date: nowS(),
            text: input.text,
            ...(entities ? { entities } : {}),
            ...(target ? { reply_to_message: { ...target, reply_to_message: undefined } } : {}),
          }) as Message,
      );
      return enqueue({ update_id: nextUpdateId, message } as Update);
    },
    pushUpdate: (update) => enqueue(update),
    redeliverUpdate: (updateId) => {
      const update = queued.get(updateId);
      if (!update) throw new Error(`redeliverUpdate: no update ${updateId} was queued`);
      enqueue(update);
    },
    callbackAnswers,
    pressButton: ({ from, message, callbackData }) => {
      const rows = (message.reply_markup?.inline_keyboard ?? []) as { callback_data?: string }[][];
      if (!rows.some((row) => row.some((b) => b.callback_data === callbackData))) {
        throw new Error(`pressButton: message ${message.message_id} has no button with callback_data ${callbackData}`);
      }
      const queryId = `cbq-${nextUpdateId}-${from.id}`;
      openQueries.add(queryId);
      return enqueue({
        update_id: nextUpdateId,
        callback_query: {
          id: queryId,
          from: { is_bot: false, first_name: 'Test', ...from },
          message,
          chat_instance: `ci-${message.chat.id}`,
          data: callbackData,
        },
      } as Update);
    },
    batch: (push) => {
      batching = true;
      try {
        return push();
      } finally {
        batching = false;
        flush();
      }
    },
    closeTopic: (chatId, threadId) => void closedTopics.add(`${chatId}:${threadId}`),
    migrateGroup: (fromChatId, toChatId, options = {}) => {
      migrated.set(fromChatId, toChatId);
      const from: User = { id: options.by ?? 1, is_bot: false, first_name: 'Test' };
      const supergroup = { id: toChatId, type: 'supergroup', title: `Test supergroup ${toChatId}` } as Chat;
      chats.set(toChatId, supergroup);
      if (!options.announce) return;
      const old = chats.get(fromChatId) ?? defaultChat(fromChatId);
      const leaving = storeMessage(
        fromChatId,
        (message_id) => ({ message_id, from, chat: old, date: nowS(), migrate_to_chat_id: toChatId }) as Message,
      );
      const arriving = storeMessage(
        toChatId,
        (message_id) =>
          ({ message_id, from, chat: supergroup, date: nowS(), migrate_from_chat_id: fromChatId }) as Message,
      );
      enqueue({ update_id: nextUpdateId, message: leaving } as Update);
      enqueue({ update_id: nextUpdateId, message: arriving } as Update);
    },
    onConfirm: (updateId, hook) => {
      confirmHooks.push({ updateId, hook });
    },
    stallNext: (method, holdMs) => {
      const list = stalls.get(method.toLowerCase()) ?? [];
      list.push(holdMs);
      stalls.set(method.toLowerCase(), list);
    },
    failNext: (method, failure) => {
      const list = failures.get(method.toLowerCase()) ?? [];
      list.push(failure);
      failures.set(method.toLowerCase(), list);
    },
    documents,
    waitForDocument: (predicate, timeoutMs) => {
      const seen = documents.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = (doc: SentDocument): boolean => {
          if (!predicate(doc)) return false;
          documentWaiters.delete(waiter);
          clearTimeout(timer);
          resolve(doc);
          return true;
        };
        const timer = setTimeout(() => {
          documentWaiters.delete(waiter);
          reject(
            new Error(
              `fake-telegram: no matching sendDocument within ${timeoutMs} ms; documents so far: ${documents.map((d) => d.filename).join(', ') || '(none)'}`,
            ),
          );
        }, timeoutMs);
        documentWaiters.add(waiter);
      });
    },
    waitForSent: (predicate, timeoutMs) => {
      const seen = sent.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = (body: SendMessageBody): boolean => {
          if (!predicate(body)) return false;
          sentWaiters.delete(waiter);
          clearTimeout(timer);
          resolve(body);
          return true;
        };
        const timer = setTimeout(() => {
          sentWaiters.delete(waiter);
          const list = sent
            .map((b, i) => `  ${i + 1}. chat ${String(b.chat_id)}: ${JSON.stringify(b.text)}`)
            .join('\n');
          reject(
            new Error(
              `fake-telegram: no matching sendMessage within ${timeoutMs} ms; sent so far:\n${list || '  (nothing)'}`,
            ),
          );
        }, timeoutMs);
        sentWaiters.add(waiter);
      });
    },
    pendingUpdates: () => queue.length,
    lastUpdateId: () => nextUpdateId - 1,
    close: () =>
      new Promise<void>((resolve) => {
        answerPoll([]);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Why `markup` is not a valid inline keyboard (Bot API InlineKeyboardMarkup), or undefined. */
function inlineKeyboardProblem(markup: unknown): string | undefined {
  const rows =
    typeof markup === 'object' && markup !== null
      ? (markup as { inline_keyboard?: unknown }).inline_keyboard
      : undefined;
  if (!Array.isArray(rows) || !rows.every(Array.isArray)) return "can't parse reply keyboard markup JSON object";
  for (const button of rows.flat() as Record<string, unknown>[]) {
    if (typeof button['text'] !== 'string' || button['text'] === '')
      return 'text buttons are unallowed in the inline keyboard';
    const data = button['callback_data'];
    if (typeof data !== 'string' || Buffer.byteLength(data, 'utf8') < 1 || Buffer.byteLength(data, 'utf8') > 64)
      return 'BUTTON_DATA_INVALID';
  }
  return undefined;
}

function injected(failure: FailureSpec): Reply {
  if (failure.body !== undefined) return { status: failure.status, body: failure.body };
  const retry = failure.status === 429 ? { retry_after: 1 } : undefined;
  return fail(failure.status, STATUS_TEXT[failure.status] ?? `Error ${failure.status}`, retry);
}

function chatFor(id: number, type: 'private' | 'group' | 'supergroup', from: User): Chat {
  if (type === 'private')
    return { id, type, first_name: from.first_name, ...(from.username ? { username: from.username } : {}) };
  return { id, type, title: `Test ${type} ${id}` } as Chat;
}

function defaultChat(id: number): Chat {
  return id > 0 ? { id, type: 'private', first_name: 'Test' } : { id, type: 'group', title: `Test group ${id}` };
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.writableEnded || res.destroyed) return;
  const text = typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body);
  res.writeHead(reply.status, { 'content-type': 'application/json' });
  res.end(text);
}

/**
 * The body grammY sent: a JSON object (`{}` when empty), or multipart/form-data parsed by undici
 * (`parsed` then holds its text fields, JSON-parsed where they are JSON, as grammY serializes
 * objects). `parsed` is undefined for anything else.
 */
async function readBody(
  req: IncomingMessage,
): Promise<{ parsed: Record<string, unknown> | undefined; form?: FormPart[] }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  recordReceived(`telegram ${(req.url ?? '').split('/').at(-1) ?? ''}`, raw);
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = parseMultipart(raw, type);
    if (!form) return { parsed: undefined };
    const parsed: Record<string, unknown> = {};
    for (const part of form) {
      if (part.filename !== undefined) continue;
      const value = part.content.toString('utf8');
      // chat_id and caption stay as sent: digits or text, never parsed into something else.
      if (part.name === 'chat_id' || part.name === 'caption') {
        parsed[part.name] = value;
        continue;
      }
      try {
        parsed[part.name] = JSON.parse(value);
      } catch {
        parsed[part.name] = value;
      }
    }
    return { parsed, form };
  }
  return { parsed: parseJson(raw.toString('utf8'), type) };
}

/** One part of a multipart/form-data body. */
export interface FormPart {
  name: string;
  /** Present for a file part (possibly ''). */
  filename?: string;
  content: Buffer;
}

/**
 * Parses multipart/form-data (RFC 7578): parts between `--boundary` lines, each with headers,
 * a blank line, and its bytes. Header names are case-insensitive and spacing around `:` and `;`
 * is free; parameter values may be quoted or not.
 *
 * @returns undefined when the body is not well-formed (no boundary, no closing delimiter, a part
 *   without `Content-Disposition: form-data; name=`).
 */
export function parseMultipart(raw: Buffer, contentType: string): FormPart[] | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const token = boundary?.[1] ?? boundary?.[2];
  if (!token) return undefined;
  const delimiter = Buffer.from(`--${token}`);
  const parts: FormPart[] = [];
  let at = raw.indexOf(delimiter);
  if (at < 0) return undefined;
  for (;;) {
    const after = at + delimiter.length;
    if (raw.subarray(after, after + 2).toString() === '--') return parts;
    const headerStart = after + 2; // CRLF after the delimiter
    const headerEnd = raw.indexOf('\r\n\r\n', headerStart);
    if (headerEnd < 0) return undefined;
    const next = raw.indexOf(Buffer.concat([Buffer.from('\r\n'), delimiter]), headerEnd + 4);
    if (next < 0) return undefined;
    const headers = raw.subarray(headerStart, headerEnd).toString('utf8').split('\r\n');
    const disposition = headers.find((h) => /^content-disposition\s*:/i.test(h));
    if (!disposition || !/:\s*form-data\s*(;|$)/i.test(disposition)) return undefined;
    const param = (key: string): string | undefined => {
      const m = new RegExp(`;\\s*${key}\\s*=\\s*(?:"([^"]*)"|([^;]*))`, 'i').exec(disposition);
      return m ? (m[1] ?? m[2]?.trim()) : undefined;
    };
    const name = param('name');
    if (name === undefined) return undefined;
    const filename = param('filename');
    parts.push({ name, ...(filename !== undefined ? { filename } : {}), content: raw.subarray(headerEnd + 4, next) });
    at = next + 2;
  }
}

function parseJson(text: string, type: string): Record<string, unknown> | undefined {
  if (text === '') return {};
  if (!type.startsWith('application/json')) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
