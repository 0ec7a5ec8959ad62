/**
 * A fake Slack on 127.0.0.1 for the real Bolt client in `baton start`: the Web API (what
 * @slack/web-api 7/8 sends: `POST {slackApiUrl}{method}`, form-urlencoded with JSON-encoded
 * objects, `Authorization: Bearer <token>`), plus the two ways Slack delivers events — signed
 * Events API POSTs to baton's request URL, and a Socket Mode WebSocket.
 *
 * Slack semantics kept (docs.slack.dev): every answer is HTTP 200 with `{ok}` except a rate
 * limit (429 + `Retry-After` seconds); `auth.test` names the bot; `chat.postMessage` needs
 * `channel` and `text`, answers `msg_too_long` past 4,000 characters (counted as displayed, i.e.
 * after `&amp;`/`&lt;`/`&gt;` are decoded — an assumption: Slack does not document how),
 * threads by `thread_ts`; `conversations.replies` lists a thread's parent then replies, oldest
 * first, paginated by `cursor`; message `ts` values are unique and increase. Events are
 * `event_callback` envelopes signed `v0=HMAC-SHA256(secret, "v0:{ts}:{body}")` ("Verifying
 * requests from Slack"); Socket Mode: `apps.connections.open` (app token) → `wss` URL, `hello`,
 * `events_api` envelopes acknowledged by `envelope_id`.
 * File uploads (what `files.uploadV2` of @slack/web-api does): `files.getUploadURLExternal`
 * needs `filename` and a positive integer `length` and answers an `upload_url` on this server
 * and a `file_id`; the upload URL takes one POST of the bytes (multipart field, as the SDK sends
 * it, or a raw body); `files.completeUploadExternal` needs `files` (a JSON array of `{id}`),
 * every id known and uploaded with exactly the announced length (else `invalid_arguments` —
 * the fake's choice of error name), and shares the file into `channel_id` / `thread_ts` with
 * `initial_comment`.
 * `chat.update` edits a message by `channel` + `ts`: a ts not in that channel is
 * `message_not_found`, a message the bot did not post `cant_update_message`, and text is checked
 * as for posting; Slack accepts an unchanged text (`ok`).
 * Simplified: any channel id may be posted to; no scopes, no membership checks.
 */
import { recordReceived } from './received.js';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** A message in the fake's history (user messages pushed by tests and the bot's posts). */
export interface SlackMessage {
  channel: string;
  ts: string;
  thread_ts?: string;
  user?: string;
  bot_id?: string;
  text: string;
}

/** An accepted `chat.postMessage`: the arguments as received and the stored message. */
export interface PostedMessage {
  args: Record<string, string>;
  message: SlackMessage;
}

/** A file shared by `files.completeUploadExternal`. */
export interface UploadedFile {
  id: string;
  filename: string;
  content: Buffer;
  /** The completion's arguments (`channel_id`, `thread_ts`, `initial_comment`, `files`). */
  args: Record<string, string>;
}

/** An accepted `chat.update`: the arguments as received and when (ms since the epoch). */
export interface UpdatedMessage {
  args: Record<string, string>;
  atMs: number;
}

/** An Events API `event_callback` envelope. */
export interface EventEnvelope {
  type: 'event_callback';
  event_id: string;
  event_time: number;
  team_id: string;
  api_app_id: string;
  event: Record<string, unknown> & { type: string; channel: string; ts: string };
  authorizations: { team_id: string; user_id: string; is_bot: boolean; is_enterprise_install: boolean }[];
}

/** A `block_actions` interactive payload: one press of a button (Slack "block_actions payloads"). */
export interface BlockActionsPayload {
  type: 'block_actions';
  trigger_id: string;
  api_app_id: string;
  team: { id: string };
  user: { id: string };
  channel: { id: string };
  container: { type: 'message'; channel_id: string; message_ts: string; is_ephemeral: false };
  message: Record<string, unknown>;
  actions: {
    type: 'button';
    block_id: string;
    action_id: string;
    value: string;
    action_ts: string;
    text: { type: 'plain_text'; text: string };
  }[];
}

/** An accepted `chat.postEphemeral`: the arguments as received. */
export interface EphemeralPost {
  args: Record<string, string>;
}

/** How one Events API POST is signed and marked; see {@link FakeSlack.deliver}. */
export interface DeliverOptions {
  /** `x-slack-retry-num` (and `x-slack-retry-reason: http_timeout`). */
  retryNum?: number;
  /** `x-slack-request-timestamp`, in seconds. @default now */
  timestampS?: number;
  /** Sign with this secret instead of the configured one (a forged request). */
  signingSecret?: string;
}

/** One Events API POST's answer. */
export interface DeliverResult {
  status: number;
  /** Time until baton answered, in ms. */
  elapsedMs: number;
}

/** Options of {@link startFakeSlack}. */
export interface StartFakeSlackOptions {
  botToken: string;
  /** The app-level token `apps.connections.open` accepts (Socket Mode). */
  appToken?: string;
  /** Where and how to POST events (HTTP Events API). */
  events?: { url: string; signingSecret: string };
}

/** A running fake; see {@link startFakeSlack}. */
export interface FakeSlack {
  /** `SLACK_API_URL`, e.g. `http://127.0.0.1:40123/api/`. */
  readonly url: string;
  readonly bot: { userId: string; botId: string; teamId: string };
  /** Every Web API call with a valid token: method and arguments. */
  readonly calls: readonly { method: string; args: Record<string, string>; atMs: number }[];
  readonly posted: readonly PostedMessage[];
  /** Accepted `chat.update` calls, in order. */
  readonly updates: readonly UpdatedMessage[];
  /** A user message: stored in the channel's history and returned as the event Slack would send. */
  userMessage(input: {
    channel: string;
    user: string;
    text: string;
    threadTs?: string;
    kind: 'app_mention' | 'im';
    /** `audio`: an audio clip recorded in Slack (`subtype` `slack_audio`, its media type and `duration_ms`). */
    files?: { name: string; bytes: Buffer; audio?: { mimetype: string; durationMs: number } }[];
  }): EventEnvelope;
  /** GETs of `url_private_download` URLs, with whether they carried the bot token. */
  readonly fileDownloads: readonly { path: string; authorized: boolean }[];
  /** A `message.im` event for a message this app's bot posted itself. */
  botMessage(input: { channel: string; text: string; threadTs?: string }): EventEnvelope;
  /** POSTs an envelope to baton's request URL, signed. */
  deliver(envelope: EventEnvelope, options?: DeliverOptions): Promise<DeliverResult>;
  /** Sends an envelope over Socket Mode and resolves once baton acknowledged it. */
  deliverSocket(envelope: EventEnvelope, timeoutMs: number): Promise<void>;
  /** Accepted `chat.postEphemeral` calls, in order. */
  readonly ephemerals: readonly EphemeralPost[];
  /**
   * A press by `user` of the button whose `action_id` is `actionId` under the posted message
   * `messageTs` (the button must be in that message's `blocks`, else this throws).
   */
  press(input: { channel: string; messageTs: string; user: string; actionId: string }): BlockActionsPayload;
  /** POSTs an interactive payload to baton's request URL, form-encoded (`payload=`) and signed like events. */
  deliverInteractive(payload: BlockActionsPayload): Promise<DeliverResult>;
  /** Sends an interactive payload over Socket Mode (`interactive` envelope); resolves once acknowledged. */
  deliverInteractiveSocket(payload: BlockActionsPayload, timeoutMs: number): Promise<void>;
  /** The next call of `method` answers `{ok:false, error}` (or a 429 with `Retry-After`). */
  failNext(method: string, failure: { error: string } | { status: 429; retryAfterS: number }): void;
  /** The next call of `method` is answered after `delayMs`. */
  delayNext(method: string, delayMs: number): void;
  /**
   * Holds the next call of `method` until the returned function is called (then answers it as
   * usual): shows that something does not wait for that call, without a clock.
   */
  holdNext(method: string): () => void;
  /** Files shared through the upload flow, in order. */
  readonly uploads: readonly UploadedFile[];
  /** Resolves with the first posted message matching `predicate` (already posted or later). */
  waitForPosted(predicate: (p: PostedMessage) => boolean, timeoutMs: number): Promise<PostedMessage>;
  /** Open Socket Mode connections. */
  sockets(): number;
  /** Cuts every Socket Mode connection (the client reconnects through `apps.connections.open`). */
  dropSockets(): void;
  close(): Promise<void>;
}

type Reply = { status: number; body: unknown; headers?: Record<string, string> };
const ok = (fields: Record<string, unknown> = {}): Reply => ({ status: 200, body: { ok: true, ...fields } });
const fail = (error: string): Reply => ({ status: 200, body: { ok: false, error } });
const MAX_TEXT_CHARS = 4000;
/** Block Kit reference: section text ≤ 3000, ≤ 25 elements per actions block, action_id ≤ 255, value ≤ 2000, ≤ 50 blocks. */
const KNOWN_BLOCK_TYPES = new Set([
  'section',
  'actions',
  'context',
  'divider',
  'header',
  'image',
  'rich_text',
  'input',
  'file',
  'video',
]);

/** Validates `blocks` as Slack does for the block types baton uses; returns the error Slack answers, or undefined. */
function invalidBlocks(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let blocks: unknown;
  try {
    blocks = JSON.parse(raw);
  } catch {
    return 'invalid_blocks_format';
  }
  if (!Array.isArray(blocks) || blocks.length > 50) return 'invalid_blocks';
  const actionIds = new Set<string>();
  for (const block of blocks as Record<string, unknown>[]) {
    if (typeof block?.type !== 'string' || !KNOWN_BLOCK_TYPES.has(block.type)) return 'invalid_blocks';
    if (block.type === 'section') {
      const text = block.text as { type?: string; text?: string } | undefined;
      if (
        !text ||
        (text.type !== 'plain_text' && text.type !== 'mrkdwn') ||
        typeof text.text !== 'string' ||
        text.text.length === 0 ||
        text.text.length > 3000
      )
        return 'invalid_blocks';
    }
    if (block.type === 'actions') {
      const elements = block.elements as Record<string, unknown>[] | undefined;
      if (!Array.isArray(elements) || elements.length === 0 || elements.length > 25) return 'invalid_blocks';
      for (const element of elements) {
        const text = element.text as { type?: string; text?: string } | undefined;
        if (element.type !== 'button' || text?.type !== 'plain_text' || !text.text || text.text.length > 75)
          return 'invalid_blocks';
        if (
          typeof element.action_id !== 'string' ||
          element.action_id.length === 0 ||
          element.action_id.length > 255 ||
          actionIds.has(element.action_id)
        )
          return 'invalid_blocks';
        actionIds.add(element.action_id);
        if (element.value !== undefined && (typeof element.value !== 'string' || element.value.length > 2000))
          return 'invalid_blocks';
        if (element.style !== undefined && element.style !== 'primary' && element.style !== 'danger')
          return 'invalid_blocks';
      }
    }
  }
  return undefined;
}

/** Starts the fake on an ephemeral port of 127.0.0.1. */
export async function startFakeSlack(options: StartFakeSlackOptions): Promise<FakeSlack> {
  const bot = { userId: 'UBATONBOT', botId: 'BBATONBOT', teamId: 'T0TEST' };
  const calls: { method: string; args: Record<string, string>; atMs: number }[] = [];
  const posted: PostedMessage[] = [];
  const updates: UpdatedMessage[] = [];
  const files_ = new Map<string, Buffer>();
  const fileDownloads: { path: string; authorized: boolean }[] = [];
  const uploads: UploadedFile[] = [];
  const pendingUploads = new Map<string, { filename: string; length: number; bytes?: Buffer }>();
  let uploadCounter = 0;
  const history: SlackMessage[] = [];
  const failures = new Map<string, ({ error: string } | { status: 429; retryAfterS: number })[]>();
  const delays = new Map<string, number[]>();
  const holds = new Map<string, Promise<void>[]>();
  const waiters = new Set<(p: PostedMessage) => boolean>();
  const acks = new Map<string, () => void>();
  const blocksOf = new Map<string, Record<string, unknown>[]>();
  const ephemerals: EphemeralPost[] = [];
  let triggerCounter = 0;
  let clock = Math.floor(Date.now() / 1000) * 1_000_000;
  let eventCounter = 0;
  const nextTs = (): string => {
    clock += 100;
    return `${Math.floor(clock / 1_000_000)}.${String(clock % 1_000_000).padStart(6, '0')}`;
  };

  const envelope = (event: EventEnvelope['event']): EventEnvelope => ({
    type: 'event_callback',
    event_id: `Ev${String(++eventCounter).padStart(8, '0')}`,
    event_time: Math.floor(Date.now() / 1000),
    team_id: bot.teamId,
    api_app_id: 'A0BATON',
    event,
    authorizations: [{ team_id: bot.teamId, user_id: bot.userId, is_bot: true, is_enterprise_install: false }],
  });

  const api = (method: string, args: Record<string, string>): Reply => {
    switch (method) {
      case 'auth.test':
        return ok({
          url: 'https://fake.slack.test/',
          team: 'Test',
          user: 'baton',
          team_id: bot.teamId,
          user_id: bot.userId,
          bot_id: bot.botId,
          is_enterprise_install: false,
        });
      case 'chat.postMessage': {
        const { channel, text } = args;
        if (!channel) return fail('channel_not_found');
        if (!text || text.trim() === '') return fail('no_text');
        if (decodeEntities(text).length > MAX_TEXT_CHARS) return fail('msg_too_long');
        const blocksError = invalidBlocks(args.blocks);
        if (blocksError) return fail(blocksError);
        const message: SlackMessage = {
          channel,
          ts: nextTs(),
          user: bot.userId,
          bot_id: bot.botId,
          text,
          ...(args.thread_ts ? { thread_ts: args.thread_ts } : {}),
        };
        if (args.blocks) blocksOf.set(message.ts, JSON.parse(args.blocks) as Record<string, unknown>[]);
        history.push(message);
        const entry = { args, message };
        posted.push(entry);
        for (const waiter of waiters) waiter(entry);
        return ok({ channel, ts: message.ts, message: { type: 'message', ...message } });
      }
      case 'files.getUploadURLExternal': {
        const length = Number(args.length);
        if (!args.filename) return fail('invalid_arguments');
        if (!Number.isSafeInteger(length) || length <= 0) return fail('invalid_arguments');
        const fileId = `F${String(++uploadCounter).padStart(9, '0')}`;
        pendingUploads.set(fileId, { filename: args.filename, length });
        return ok({ upload_url: `http://127.0.0.1:${port()}/upload/v1/${fileId}`, file_id: fileId });
      }
      case 'files.completeUploadExternal': {
        let list: { id?: string; title?: string }[];
        try {
          list = JSON.parse(args.files ?? '') as { id?: string }[];
        } catch {
          return fail('invalid_arguments');
        }
        if (!Array.isArray(list) || list.length === 0) return fail('invalid_arguments');
        for (const entry of list) {
          const upload = entry.id ? pendingUploads.get(entry.id) : undefined;
          if (!upload?.bytes || upload.bytes.length !== upload.length) return fail('invalid_arguments');
        }
        const shared = list.map((entry) => {
          const upload = pendingUploads.get(entry.id!)!;
          pendingUploads.delete(entry.id!);
          const file: UploadedFile = { id: entry.id!, filename: upload.filename, content: upload.bytes!, args };
          uploads.push(file);
          return { id: file.id, name: file.filename, title: entry.title ?? file.filename, size: file.content.length };
        });
        return ok({ files: shared });
      }
      case 'chat.update': {
        const { channel, ts, text } = args;
        if (!channel) return fail('channel_not_found');
        const message = history.find((m) => m.channel === channel && m.ts === ts);
        if (!message) return fail('message_not_found');
        if (message.user !== bot.userId) return fail('cant_update_message');
        if (!text || text.trim() === '') return fail('no_text');
        if (decodeEntities(text).length > MAX_TEXT_CHARS) return fail('msg_too_long');
        const updateBlocksError = invalidBlocks(args.blocks);
        if (updateBlocksError) return fail(updateBlocksError);
        message.text = text;
        // Slack keeps the previous blocks when an update has none.
        if (args.blocks) blocksOf.set(ts!, JSON.parse(args.blocks) as Record<string, unknown>[]);
        updates.push({ args, atMs: Date.now() });
        return ok({ channel, ts, text, message: { type: 'message', ...message } });
      }
      case 'chat.postEphemeral': {
        const { channel, user, text } = args;
        if (!channel) return fail('channel_not_found');
        if (!user) return fail('user_not_found');
        if (!text || text.trim() === '') return fail('no_text');
        ephemerals.push({ args });
        return ok({ message_ts: nextTs() });
      }
      case 'conversations.replies': {
        const thread = history.filter(
          (m) => m.channel === args.channel && (m.ts === args.ts || m.thread_ts === args.ts),
        );
        if (!thread.some((m) => m.ts === args.ts)) return fail('thread_not_found');
        const limit = Math.min(1000, Math.max(1, Number(args.limit ?? 100)));
        const start = Number(args.cursor ?? 0);
        const page = thread.slice(start, start + limit);
        const more = start + limit < thread.length;
        return ok({
          messages: page.map((m) => ({ type: 'message', ...m })),
          has_more: more,
          response_metadata: { next_cursor: more ? String(start + limit) : '' },
        });
      }
      default:
        return fail('unknown_method');
    }
  };

  const server = createServer((req, res) => {
    const filePath = new URL(req.url ?? '/', 'http://x').pathname;
    if (req.method === 'GET' && filePath.startsWith('/files-pri/')) {
      const authorized = req.headers.authorization === `Bearer ${options.botToken}`;
      fileDownloads.push({ path: filePath, authorized });
      const bytes = files_.get(filePath);
      // Without the token Slack answers with its sign-in page, not the file.
      res.writeHead(
        !authorized ? 302 : bytes ? 200 : 404,
        authorized
          ? { 'content-type': 'application/octet-stream' }
          : { location: 'https://fake.slack.test/?redir=signin' },
      );
      res.end(authorized ? bytes : undefined);
      return;
    }
    const upload = /^\/upload\/v1\/(F\d+)$/.exec(filePath);
    if (req.method === 'POST' && upload) {
      void readBytes(req).then(
        async (raw) => {
          const pending = pendingUploads.get(upload[1]!);
          if (!pending) return send(res, { status: 404, body: 'not found' });
          const type = req.headers['content-type'] ?? '';
          let bytes = raw;
          if (type.startsWith('multipart/form-data')) {
            const form = await new Request('http://fake.invalid/', {
              method: 'POST',
              headers: { 'content-type': type },
              body: raw,
            }).formData();
            const part = [...form.values()].find((v) => typeof v !== 'string') as Blob | undefined;
            if (!part) return send(res, { status: 400, body: 'no file' });
            bytes = Buffer.from(await part.arrayBuffer());
          }
          pending.bytes = bytes;
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`OK - ${bytes.length}`);
        },
        () => res.destroy(),
      );
      return;
    }
    void readBody(req).then(
      async (raw) => {
        const method = /^\/api\/([\w.]+)$/.exec(new URL(req.url ?? '/', 'http://x').pathname)?.[1];
        if (!method) return send(res, { status: 404, body: 'not found' });
        const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const wanted = method === 'apps.connections.open' ? options.appToken : options.botToken;
        if (!token || token !== wanted) return send(res, fail('invalid_auth'));
        const args = parseArgs(raw, req.headers['content-type'] ?? '');
        calls.push({ method, args, atMs: Date.now() });
        const delay = delays.get(method)?.shift();
        if (delay) await new Promise((r) => setTimeout(r, delay));
        const hold = holds.get(method)?.shift();
        if (hold) await hold;
        const failure = failures.get(method)?.shift();
        if (failure && 'status' in failure) {
          return send(res, {
            status: 429,
            body: { ok: false, error: 'ratelimited' },
            headers: { 'retry-after': String(failure.retryAfterS) },
          });
        }
        if (failure) return send(res, fail(failure.error));
        if (method === 'apps.connections.open')
          return send(res, ok({ url: `ws://127.0.0.1:${port()}/link/?ticket=fake` }));
        send(res, api(method, args));
      },
      () => res.destroy(),
    );
  });
  const wss = new WebSocketServer({ server });
  const sockets = new Set<WebSocket>();
  wss.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('message', (data) => {
      const envelopeId = (JSON.parse(String(data)) as { envelope_id?: string }).envelope_id;
      if (envelopeId) acks.get(envelopeId)?.();
    });
    socket.send(
      JSON.stringify({ type: 'hello', num_connections: sockets.size, connection_info: { app_id: 'A0BATON' } }),
    );
  });
  // Slack pings Socket Mode clients; @slack/socket-mode reconnects after 30 s without one.
  const pinger = setInterval(() => sockets.forEach((s) => s.ping()), 5_000);
  pinger.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (): number => (server.address() as AddressInfo).port;

  const userMessage: FakeSlack['userMessage'] = (input) => {
    const message: SlackMessage = {
      channel: input.channel,
      ts: nextTs(),
      user: input.user,
      text: input.text,
      ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
    };
    history.push(message);
    // Slack "File object": a private download URL that needs the bot token (scope files:read).
    const files = (input.files ?? []).map((file) => {
      const id = `F${String(files_.size + 1).padStart(8, '0')}`;
      const path = `/files-pri/${bot.teamId}-${id}/download/${encodeURIComponent(file.name)}`;
      files_.set(path, file.bytes);
      return {
        id,
        name: file.name,
        size: file.bytes.length,
        mimetype: file.audio?.mimetype ?? 'application/octet-stream',
        ...(file.audio
          ? { subtype: 'slack_audio', media_display_type: 'audio', duration_ms: file.audio.durationMs }
          : {}),
        url_private: `http://127.0.0.1:${port()}${path.replace('/download', '')}`,
        url_private_download: `http://127.0.0.1:${port()}${path}`,
      };
    });
    const base = {
      ...message,
      event_ts: message.ts,
      team: bot.teamId,
      client_msg_id: `msg-${message.ts}`,
      ...(files.length > 0 ? { subtype: 'file_share', files } : {}),
    };
    return envelope(
      input.kind === 'app_mention'
        ? { type: 'app_mention', ...base }
        : { type: 'message', channel_type: 'im', ...base },
    );
  };

  return {
    url: `http://127.0.0.1:${port()}/api/`,
    bot,
    calls,
    posted,
    updates,
    userMessage,
    fileDownloads,
    uploads,
    ephemerals,
    press: (input) => {
      const message = history.find((m) => m.channel === input.channel && m.ts === input.messageTs);
      if (!message) throw new Error(`fake-slack: no message ${input.messageTs} in ${input.channel}`);
      const blocks = blocksOf.get(input.messageTs) ?? [];
      const button = blocks
        .filter((b) => b.type === 'actions')
        .flatMap((b) => b.elements as { action_id: string; value?: string; text: { text: string } }[])
        .find((e) => e.action_id === input.actionId);
      if (!button)
        throw new Error(
          `fake-slack: message ${input.messageTs} has no button ${input.actionId}; blocks: ${JSON.stringify(blocks)}`,
        );
      const actionTs = nextTs();
      return {
        type: 'block_actions',
        trigger_id: `${++triggerCounter}.${bot.teamId}.${Math.random().toString(16).slice(2)}`,
        api_app_id: 'A0BATON',
        team: { id: bot.teamId },
        user: { id: input.user },
        channel: { id: input.channel },
        container: { type: 'message', channel_id: input.channel, message_ts: input.messageTs, is_ephemeral: false },
        message: { type: 'message', ...message, blocks },
        actions: [
          {
            type: 'button',
            block_id: 'b',
            action_id: button.action_id,
            value: button.value ?? '',
            action_ts: actionTs,
            text: { type: 'plain_text', text: button.text.text },
          },
        ],
      };
    },
    deliverInteractive: async (payload) => {
      if (!options.events) throw new Error('fake-slack: no events target configured');
      const raw = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = `v0=${createHmac('sha256', options.events.signingSecret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
      const started = performance.now();
      const response = await fetch(options.events.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': signature,
        },
        body: raw,
        signal: AbortSignal.timeout(10_000),
      });
      await response.text();
      return { status: response.status, elapsedMs: performance.now() - started };
    },
    deliverInteractiveSocket: (payload, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const socket = [...sockets][0];
        if (!socket) return reject(new Error('fake-slack: no Socket Mode connection'));
        const envelopeId = `env-${payload.trigger_id}-${Math.random().toString(16).slice(2)}`;
        const timer = setTimeout(
          () => reject(new Error(`fake-slack: envelope ${envelopeId} not acknowledged within ${timeoutMs} ms`)),
          timeoutMs,
        );
        acks.set(envelopeId, () => {
          clearTimeout(timer);
          acks.delete(envelopeId);
          resolve();
        });
        socket.send(
          JSON.stringify({ envelope_id: envelopeId, type: 'interactive', accepts_response_payload: false, payload }),
        );
      }),
    botMessage: (input) => {
      const message: SlackMessage = {
        channel: input.channel,
        ts: nextTs(),
        user: bot.userId,
        bot_id: bot.botId,
        text: input.text,
        ...(input.threadTs ? { thread_ts: input.threadTs } : {}),
      };
      history.push(message);
      return envelope({ type: 'message', channel_type: 'im', app_id: 'A0BATON', event_ts: message.ts, ...message });
    },
    deliver: async (body, deliverOptions = {}) => {
      if (!options.events) throw new Error('fake-slack: no events target configured');
      const raw = JSON.stringify(body);
      const timestamp = String(deliverOptions.timestampS ?? Math.floor(Date.now() / 1000));
      const secret = deliverOptions.signingSecret ?? options.events.signingSecret;
      const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${raw}`).digest('hex')}`;
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signature,
      };
      if (deliverOptions.retryNum !== undefined) {
        headers['x-slack-retry-num'] = String(deliverOptions.retryNum);
        headers['x-slack-retry-reason'] = 'http_timeout';
      }
      const started = performance.now();
      const response = await fetch(options.events.url, {
        method: 'POST',
        headers,
        body: raw,
        signal: AbortSignal.timeout(10_000),
      });
      await response.text();
      return { status: response.status, elapsedMs: performance.now() - started };
    },
    deliverSocket: (body, timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        const socket = [...sockets][0];
        if (!socket) return reject(new Error('fake-slack: no Socket Mode connection'));
        const envelopeId = `env-${body.event_id}-${Math.random().toString(16).slice(2)}`;
        const timer = setTimeout(
          () => reject(new Error(`fake-slack: envelope ${envelopeId} not acknowledged within ${timeoutMs} ms`)),
          timeoutMs,
        );
        acks.set(envelopeId, () => {
          clearTimeout(timer);
          acks.delete(envelopeId);
          resolve();
        });
        socket.send(
          JSON.stringify({
            envelope_id: envelopeId,
            type: 'events_api',
            accepts_response_payload: false,
            retry_attempt: 0,
            retry_reason: '',
            payload: body,
          }),
        );
      }),
    failNext: (method, failure) => failures.set(method, [...(failures.get(method) ?? []), failure]),
    holdNext: (method) => {
      let release!: () => void;
      holds.set(method, [...(holds.get(method) ?? []), new Promise<void>((resolve) => (release = resolve))]);
      return release;
    },
    delayNext: (method, delayMs) => delays.set(method, [...(delays.get(method) ?? []), delayMs]),
    waitForPosted: (predicate, timeoutMs) => {
      const seen = posted.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = (p: PostedMessage): boolean => {
          if (!predicate(p)) return false;
          waiters.delete(waiter);
          clearTimeout(timer);
          resolve(p);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const list = posted
            .map(
              (p, i) =>
                `  ${i + 1}. ${p.message.channel} thread ${p.args.thread_ts ?? '-'}: ${JSON.stringify(p.args.text)}`,
            )
            .join('\n');
          reject(
            new Error(
              `fake-slack: no matching chat.postMessage within ${timeoutMs} ms; posted so far:\n${list || '  (nothing)'}`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    sockets: () => sockets.size,
    dropSockets: () => sockets.forEach((s) => s.terminate()),
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(pinger);
        for (const socket of sockets) socket.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What Slack displays for encoded text: the three entities decoded. */
function decodeEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Form-urlencoded (what @slack/web-api sends) or JSON arguments, as strings. */
function parseArgs(raw: string, contentType: string): Record<string, string> {
  if (contentType.startsWith('application/json')) {
    const parsed = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
    return Object.fromEntries(
      Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  recordReceived(`slack ${req.url ?? ''}`, raw);
  return raw;
}

async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString('utf8');
}

function send(res: ServerResponse, reply: Reply): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(reply.status, { 'content-type': 'application/json; charset=utf-8', ...reply.headers });
  res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body));
}
