/**
 * A fake Discord on 127.0.0.1 for the real discord.js client in `baton start`: REST under
 * `{url}/v10/…` (what @discordjs/rest 2.x calls with `api: url`, `Authorization: Bot <token>`)
 * and a gateway WebSocket on the same port, whose URL `GET /gateway/bot` hands out.
 *
 * Discord semantics kept (discord.com/developers/docs): gateway v10 JSON — HELLO (op 10), IDENTIFY
 * (op 2) → READY, then GUILD_CREATE per guild when the GUILDS intent is set; heartbeats (op 1)
 * acknowledged (op 11); a wrong token closes with 4004, a privileged intent the app may not use
 * with 4014; MESSAGE_CREATE reaches a session only
 * with GUILD_MESSAGES (guild) or DIRECT_MESSAGES (DM), and its `content` is empty without
 * MESSAGE_CONTENT unless it is a DM or mentions the bot; the bot's own messages are dispatched
 * too; replies carry `message_reference` and `referenced_message`. REST: "Create Message" refuses
 * empty or over-2000-character content with 50035 Invalid Form Body; a 429 carries
 * `Retry-After` and `retry_after` (seconds). A message with files is multipart/form-data
 * ("Uploading Files"): a `payload_json` field with the JSON body and `files[n]` file parts; every
 * `attachments[].id` must name a `files[n]` part; a file over 10 MiB (the default limit without
 * server boosts) or a request over 25 MiB is refused with 413 / code 40005; content may then be
 * empty.
 * `Retry-After` and `retry_after` (seconds).
 * "Edit Message" (`PATCH /channels/{channel}/messages/{message}`): an unknown message in that
 * channel is 404 10008 Unknown Message, another author's 403 50005 "Cannot edit a message authored
 * by another user", content is checked as for creating; MESSAGE_UPDATE is dispatched.
 * Simplified: no resume (op 6 answers invalid session), no permissions, any channel id works.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/** Gateway intent bits ("Gateway Intents"). */
export const INTENTS = {
  guilds: 1 << 0,
  guildMessages: 1 << 9,
  directMessages: 1 << 12,
  messageContent: 1 << 15,
} as const;

import { recordReceived } from './received.js';
/** A Discord user object as the API sends it. */
export interface DiscordUser {
  id: string;
  username: string;
  global_name: string | null;
  discriminator: string;
  avatar: null;
  bot?: boolean;
}

/** A message object (the fields the fake fills). */
export interface DiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: DiscordUser;
  content: string;
  type: number;
  mentions: DiscordUser[];
  message_reference?: { message_id: string; channel_id: string; guild_id?: string };
  referenced_message?: DiscordMessage | null;
  [field: string]: unknown;
}

/** A user's message; `attachments` are served from this fake as its CDN (`/attachments/…`). */
export interface PushDiscordMessage {
  channelId: string;
  guildId?: string | undefined;
  author: DiscordUser;
  content: string;
  replyTo?: string | undefined;
  /**
   * `voiceSeconds`: a voice message recorded in the client (its `duration_secs` and `waveform`,
   * and the message's `IS_VOICE_MESSAGE` flag, 1 << 13).
   */
  attachments?: { name: string; bytes: Buffer; contentType?: string; voiceSeconds?: number }[];
}

/** An accepted Create Message: the JSON body as received and the message created. */
export interface SentMessage {
  channelId: string;
  body: Record<string, unknown>;
  message: DiscordMessage;
  /** The files sent with it (multipart `files[n]`), in order; empty for a JSON body. */
  files: { filename: string; content: Buffer }[];
}

/** An accepted Edit Message: the JSON body as received and when (ms since the epoch). */
export interface EditedMessage {
  channelId: string;
  messageId: string;
  body: Record<string, unknown>;
  atMs: number;
}

/** An interaction callback (`POST /interactions/{id}/{token}/callback`) or follow-up (`POST /webhooks/{app}/{token}`). */
export interface InteractionReply {
  interactionId: string;
  kind: 'callback' | 'followup';
  body: Record<string, unknown>;
  /** Time since the interaction was dispatched, in ms (Discord wants the callback within 3 s). */
  afterMs: number;
}

/** Options of {@link startFakeDiscord}. */
export interface StartFakeDiscordOptions {
  token: string;
  /** Guilds the bot is in, each with text channels. */
  guilds?: { id: string; name: string; channelIds: string[] }[];
  /** False: the app may not use MESSAGE_CONTENT (not enabled in the portal); IDENTIFY with it closes 4014. @default true */
  messageContentAllowed?: boolean;
}

/** A running fake; see {@link startFakeDiscord}. */
export interface FakeDiscord {
  /** `DISCORD_API_URL`, e.g. `http://127.0.0.1:40123/api`. */
  readonly url: string;
  readonly botUser: DiscordUser;
  /** IDENTIFY payloads received with the right token. */
  readonly identifies: readonly { intents: number }[];
  readonly sent: readonly SentMessage[];
  /** Accepted Edit Message calls, in order. */
  readonly edits: readonly EditedMessage[];
  /** Every REST call with the right token: method, path (after `/api/v10`), when (ms since the epoch) and the status answered. */
  readonly restCalls: readonly { method: string; path: string; atMs: number; status: number }[];
  /** The next Edit Message of a message in `channelId` fails with this status (429: `retryAfterS`). */
  failNextEdit(channelId: string, failure: { status: number; code?: number; retryAfterS?: number }): void;
  /** Interaction callbacks and follow-ups, in order. */
  readonly interactionReplies: readonly InteractionReply[];
  /**
   * `user` presses the button with `customId` under the message `messageId` (it must be in the
   * message's `components`, else this throws): INTERACTION_CREATE (type 3, component_type 2) is
   * dispatched to every session. Pass the returned payload to {@link dispatchInteraction} to send
   * the same interaction again. @returns the interaction's id
   */
  press(input: { messageId: string; user: DiscordUser; customId: string }): Record<string, unknown>;
  /** Dispatches an INTERACTION_CREATE payload (again) to every session. */
  dispatchInteraction(interaction: Record<string, unknown>): void;
  /**
   * The next interaction callback is accepted (recorded in {@link interactionReplies}) but its HTTP
   * answer is never sent: the caller waits until its process dies (a kill point a test observes).
   */
  holdNextInteractionCallback(): void;
  /** Calls `listener` at each IDENTIFY with the right token, before READY is sent. */
  onIdentify(listener: () => void): void;
  /** A user posts a message; dispatched as MESSAGE_CREATE to sessions that may see it. */
  pushMessage(input: PushDiscordMessage): DiscordMessage;
  /** Dispatches a pushed message's MESSAGE_CREATE (again) to every session that may see it. */
  redeliverMessage(message: DiscordMessage): void;
  /** GET requests for attachment URLs (the CDN), in order. */
  readonly attachmentDownloads: readonly string[];
  /**
   * The next attachment GETs (one per entry, in order) are answered with a fault instead of the
   * file: an HTTP status (with `Retry-After` seconds when given), `reset` (the connection is cut
   * before any answer), or `hold` (no answer for `ms`, then the file).
   */
  faultDownloads(...faults: DownloadFault[]): void;
  /** The next Create Message in `channelId` fails with this status (429: `retryAfterS`). */
  failNext(channelId: string, failure: { status: number; code?: number; retryAfterS?: number }): void;
  /**
   * The next Create Message in `channelId` that carries a file is refused as Discord refuses a
   * file it will not take: 413 / 40005 "Request entity too large", or 400 / 50035 Invalid Form Body.
   */
  refuseNextFile(channelId: string, refusal: { status: 413 | 400; early?: boolean }): void;
  waitForSent(predicate: (m: SentMessage) => boolean, timeoutMs: number): Promise<SentMessage>;
  /** Sessions that completed IDENTIFY and are open. */
  sessions(): number;
  /** Closes every gateway connection with `code` (e.g. 4000 Unknown error: the client reconnects). */
  dropConnections(code: number): void;
  close(): Promise<void>;
}

/** A fault of one attachment download; see {@link FakeDiscord.faultDownloads}. */
export type DownloadFault = { status: number; retryAfterS?: number } | { reset: true } | { holdMs: number };

const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** A user object. */
export function discordUser(id: string, username: string, bot = false): DiscordUser {
  return { id, username, global_name: null, discriminator: '0', avatar: null, ...(bot ? { bot: true } : {}) };
}

/** Starts the fake on an ephemeral port of 127.0.0.1. */
export async function startFakeDiscord(options: StartFakeDiscordOptions): Promise<FakeDiscord> {
  const botUser = discordUser('900000000000000001', 'baton', true);
  const identifies: { intents: number }[] = [];
  const sent: SentMessage[] = [];
  const edits: EditedMessage[] = [];
  const restCalls: { method: string; path: string; atMs: number; status: number }[] = [];
  const editFailures = new Map<string, { status: number; code?: number; retryAfterS?: number }[]>();
  const messages = new Map<string, DiscordMessage>();
  const failures = new Map<string, { status: number; code?: number; retryAfterS?: number }[]>();
  const fileRefusals = new Map<string, { status: 413 | 400; early?: boolean }[]>();
  const waiters = new Set<(m: SentMessage) => boolean>();
  const sessions = new Map<WebSocket, { intents: number; seq: number }>();
  const files = new Map<string, Buffer>();
  const attachmentDownloads: string[] = [];
  const downloadFaults: DownloadFault[] = [];
  const interactionReplies: InteractionReply[] = [];
  let holdCallback = false;
  const identifyListeners: (() => void)[] = [];
  /** Interactions dispatched: token → id, when, whether the callback came. */
  const interactions = new Map<string, { id: string; atMs: number; called: boolean }>();
  let counter = 0n;
  const snowflake = (): string => String(((BigInt(Date.now()) - DISCORD_EPOCH_MS) << 22n) | (counter++ & 0xfffn));

  const dispatch = (socket: WebSocket, t: string, d: unknown): void => {
    const session = sessions.get(socket);
    if (!session) return;
    session.seq += 1;
    socket.send(JSON.stringify({ op: 0, t, s: session.seq, d }));
  };

  const broadcastMessage = (message: DiscordMessage): void => {
    for (const [socket, { intents }] of sessions) {
      const needed = message.guild_id ? INTENTS.guildMessages : INTENTS.directMessages;
      if (!(intents & needed)) continue;
      const canRead =
        (intents & INTENTS.messageContent) !== 0 ||
        !message.guild_id ||
        message.mentions.some((u) => u.id === botUser.id) ||
        message.author.id === botUser.id;
      dispatch(socket, 'MESSAGE_CREATE', {
        ...message,
        content: canRead ? message.content : '',
        channel_type: message.guild_id ? 0 : 1,
      });
    }
  };

  const createMessage = (input: PushDiscordMessage): DiscordMessage => {
    const attachments = (input.attachments ?? []).map((file) => {
      const id = snowflake();
      const path = `/attachments/${input.channelId}/${id}/${encodeURIComponent(file.name)}`;
      files.set(path, file.bytes);
      return {
        id,
        filename: file.name,
        size: file.bytes.length,
        url: `http://127.0.0.1:${port()}${path}?ex=0&is=0&hm=fake`,
        proxy_url: `http://127.0.0.1:${port()}${path}`,
        ...(file.contentType ? { content_type: file.contentType } : {}),
        ...(file.voiceSeconds !== undefined ? { duration_secs: file.voiceSeconds, waveform: 'AAAA' } : {}),
      };
    });
    const isVoice = (input.attachments ?? []).some((file) => file.voiceSeconds !== undefined);
    const referenced = input.replyTo ? messages.get(input.replyTo) : undefined;
    const mentioned = [...input.content.matchAll(/<@!?(\d+)>/g)].map((m) => m[1]);
    const message: DiscordMessage = {
      id: snowflake(),
      channel_id: input.channelId,
      ...(input.guildId ? { guild_id: input.guildId } : {}),
      author: input.author,
      content: input.content,
      timestamp: new Date().toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mention_roles: [],
      attachments,
      embeds: [],
      pinned: false,
      flags: isVoice ? 1 << 13 : 0,
      mentions: mentioned.includes(botUser.id) ? [botUser] : [],
      type: referenced ? 19 : 0,
      ...(referenced
        ? {
            message_reference: {
              message_id: referenced.id,
              channel_id: input.channelId,
              ...(input.guildId ? { guild_id: input.guildId } : {}),
            },
            referenced_message: withoutReference(referenced),
          }
        : {}),
    };
    messages.set(message.id, message);
    return message;
  };

  const interactionRest = (
    path: string,
    body: Record<string, unknown>,
  ): { status: number; body: unknown } | undefined => {
    const callback = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
    const followup = /^\/webhooks\/(\d+)\/([^/]+)$/.exec(path);
    if (!callback && !followup) return undefined;
    const token = (callback ?? followup)![2]!;
    const known = interactions.get(token);
    if (!known || (callback && known.id !== callback[1]) || (followup && followup[1] !== botUser.id))
      return { status: 404, body: { message: 'Unknown interaction', code: 10062 } };
    if (callback) {
      if (known.called)
        return { status: 400, body: { message: 'Interaction has already been acknowledged.', code: 40060 } };
      // Types 4 (message), 5 (deferred message), 6 (deferred update), 7 (update) answer a component.
      if (![4, 5, 6, 7].includes(body.type as number))
        return { status: 400, body: { message: 'Invalid Form Body', code: 50035 } };
      known.called = true;
    } else {
      if (!known.called) return { status: 404, body: { message: 'Unknown Webhook', code: 10015 } };
      const content = typeof body.content === 'string' ? body.content : '';
      if (content === '' || content.length > 2000)
        return { status: 400, body: { message: 'Invalid Form Body', code: 50035 } };
    }
    interactionReplies.push({
      interactionId: known.id,
      kind: callback ? 'callback' : 'followup',
      body,
      afterMs: Date.now() - known.atMs,
    });
    return {
      status: callback ? 204 : 200,
      body: callback
        ? ''
        : { id: snowflake(), channel_id: '0', content: body.content, flags: body.flags, author: botUser, type: 0 },
    };
  };

  const rest = async (
    method: string,
    path: string,
    body: Record<string | symbol, unknown>,
  ): Promise<{ status: number; body: unknown; headers?: Record<string, string> }> => {
    if (method === 'GET' && path === '/gateway/bot') {
      return {
        status: 200,
        body: {
          url: `ws://127.0.0.1:${port()}`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        },
      };
    }
    if (method === 'GET' && path === '/users/@me') return { status: 200, body: botUser };
    const post = /^\/channels\/(\d+)\/messages$/.exec(path);
    if (method === 'POST' && post) {
      const channelId = post[1]!;
      const failure = failures.get(channelId)?.shift();
      if (failure?.status === 429) {
        const retryAfterS = failure.retryAfterS ?? 1;
        return {
          status: 429,
          body: { message: 'You are being rate limited.', retry_after: retryAfterS, global: false },
          headers: { 'retry-after': String(retryAfterS), 'x-ratelimit-scope': 'user' },
        };
      }
      if (failure) return { status: failure.status, body: { message: 'Injected failure', code: failure.code ?? 0 } };
      const content = typeof body.content === 'string' ? body.content : '';
      const files = (body[FILES] ?? []) as { field: string; filename: string; content: Buffer }[];
      const fileRefusal = files.length > 0 ? fileRefusals.get(channelId)?.shift() : undefined;
      if (fileRefusal?.status === 413)
        return { status: 413, body: { message: 'Request entity too large', code: 40005 } };
      if (fileRefusal)
        return {
          status: 400,
          body: {
            message: 'Invalid Form Body',
            code: 50035,
            errors: { files: { _errors: [{ code: 'BINARY_TYPE_MAX_SIZE', message: 'File is too large.' }] } },
          },
        };
      if (files.length > 0) {
        const tooLarge = { status: 413, body: { message: 'Request entity too large', code: 40005 } };
        if (
          files.some((f) => f.content.length > DISCORD_FILE_MAX_BYTES) ||
          (body[REQUEST_BYTES] as number) > DISCORD_REQUEST_MAX_BYTES
        )
          return tooLarge;
        const ids = new Set(files.map((f) => /^files\[(\d+)\]$/.exec(f.field)?.[1]));
        const listed = Array.isArray(body.attachments) ? (body.attachments as { id?: unknown }[]) : [];
        if (ids.has(undefined) || listed.some((a) => !ids.has(String(a.id)))) {
          return {
            status: 400,
            body: {
              message: 'Invalid Form Body',
              code: 50035,
              errors: { attachments: { _errors: [{ code: 'ATTACHMENT_NOT_FOUND', message: 'Unknown attachment' }] } },
            },
          };
        }
      }
      if ((content === '' && files.length === 0) || content.length > 2000) {
        const error = content === '' ? 'BASE_TYPE_REQUIRED' : 'BASE_TYPE_MAX_LENGTH';
        return {
          status: 400,
          body: {
            message: 'Invalid Form Body',
            code: 50035,
            errors: { content: { _errors: [{ code: error, message: 'Must be 2000 or fewer in length.' }] } },
          },
        };
      }
      const componentsError = invalidComponents(body.components);
      if (componentsError)
        return {
          status: 400,
          body: {
            message: 'Invalid Form Body',
            code: 50035,
            errors: { components: { _errors: [{ code: 'COMPONENT_INVALID', message: componentsError }] } },
          },
        };
      const reference = body.message_reference as { message_id?: string } | undefined;
      const guildId = [...messages.values()].find((m) => m.channel_id === channelId)?.guild_id;
      const message = createMessage({ channelId, guildId, author: botUser, content, replyTo: reference?.message_id });
      if (files.length > 0)
        message.attachments = files.map((f, i) => ({
          id: `${message.id}${i}`,
          filename: f.filename,
          size: f.content.length,
          url: `http://127.0.0.1:${port()}/attachments/sent/${message.id}/${f.filename}`,
          proxy_url: '',
          content_type: 'application/octet-stream',
        }));
      message.components = Array.isArray(body.components) ? body.components : [];
      const entry = {
        channelId,
        body,
        message,
        files: files.map((f) => ({ filename: f.filename, content: f.content })),
      };
      sent.push(entry);
      for (const waiter of waiters) waiter(entry);
      broadcastMessage(message);
      return { status: 200, body: message };
    }
    const patch = /^\/channels\/(\d+)\/messages\/(\d+)$/.exec(path);
    if (method === 'PATCH' && patch) {
      const [, channelId = '', messageId = ''] = patch;
      const failure = editFailures.get(channelId)?.shift();
      if (failure?.status === 429) {
        const retryAfterS = failure.retryAfterS ?? 1;
        return {
          status: 429,
          body: { message: 'You are being rate limited.', retry_after: retryAfterS, global: false },
          headers: { 'retry-after': String(retryAfterS), 'x-ratelimit-scope': 'user' },
        };
      }
      if (failure) return { status: failure.status, body: { message: 'Injected failure', code: failure.code ?? 0 } };
      const message = messages.get(messageId);
      if (!message || message.channel_id !== channelId)
        return { status: 404, body: { message: 'Unknown Message', code: 10008 } };
      if (message.author.id !== botUser.id)
        return { status: 403, body: { message: 'Cannot edit a message authored by another user', code: 50005 } };
      if (typeof body.content === 'string') {
        if (body.content.length > 2000) {
          return {
            status: 400,
            body: {
              message: 'Invalid Form Body',
              code: 50035,
              errors: {
                content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 2000 or fewer in length.' }] },
              },
            },
          };
        }
        message.content = body.content;
      }
      const editComponentsError = invalidComponents(body.components);
      if (editComponentsError)
        return {
          status: 400,
          body: {
            message: 'Invalid Form Body',
            code: 50035,
            errors: { components: { _errors: [{ code: 'COMPONENT_INVALID', message: editComponentsError }] } },
          },
        };
      if (Array.isArray(body.components)) message.components = body.components;
      message['edited_timestamp'] = new Date().toISOString();
      edits.push({ channelId, messageId, body, atMs: Date.now() });
      for (const [socket] of sessions) dispatch(socket, 'MESSAGE_UPDATE', { ...withoutReference(message) });
      return { status: 200, body: message };
    }
    return { status: 404, body: { message: '404: Not Found', code: 0 } };
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      attachmentDownloads.push(url.pathname);
      const bytes = files.get(url.pathname);
      const answer = (): void => {
        res.writeHead(bytes ? 200 : 404, { 'content-type': 'application/octet-stream' });
        res.end(bytes);
      };
      const fault = downloadFaults.shift();
      if (!fault) return answer();
      if ('reset' in fault) return void req.socket.destroy();
      if ('holdMs' in fault) return void setTimeout(answer, fault.holdMs).unref();
      res.writeHead(fault.status, {
        'content-type': 'text/plain',
        ...(fault.retryAfterS !== undefined ? { 'retry-after': String(fault.retryAfterS) } : {}),
      });
      res.end(`fake CDN fault ${fault.status}`);
      return;
    }
    // An oversize upload is refused before its body is read, and the connection closed, as a
    // front proxy does.
    const upload = /^\/api\/v10\/channels\/(\d+)\/messages$/.exec(url.pathname);
    if (
      req.method === 'POST' &&
      upload &&
      String(req.headers['content-type']).startsWith('multipart/') &&
      fileRefusals.get(upload[1]!)?.[0]?.early
    ) {
      fileRefusals.get(upload[1]!)!.shift();
      res.writeHead(413, { 'content-type': 'application/json', connection: 'close' });
      res.end(JSON.stringify({ message: 'Request entity too large', code: 40005 }), () => req.socket.destroy());
      return;
    }
    void readJson(req).then(
      async (body) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api\/v10/, '');
        // Interaction callbacks and follow-ups are authorized by the interaction token in the path.
        const byToken = req.method === 'POST' ? interactionRest(path, body as Record<string, unknown>) : undefined;
        if (byToken) {
          restCalls.push({ method: 'POST', path, atMs: Date.now(), status: byToken.status });
          if (holdCallback && byToken.status === 204) {
            holdCallback = false;
            return;
          }
          if (byToken.status === 204) {
            res.writeHead(204);
            res.end();
            return;
          }
          return send(res, byToken.status, byToken.body);
        }
        if (req.headers.authorization !== `Bot ${options.token}`)
          return send(res, 401, { message: '401: Unauthorized', code: 0 });
        const atMs = Date.now();
        const reply = await rest(req.method ?? 'GET', path, body);
        restCalls.push({ method: req.method ?? 'GET', path, atMs, status: reply.status });
        send(res, reply.status, reply.body, reply.headers);
      },
      () => res.destroy(),
    );
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (socket) => {
    const heartbeats = setTimeout(() => socket.close(4009, 'Session timed out'), 60_000);
    socket.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 } }));
    socket.on('close', () => {
      clearTimeout(heartbeats);
      sessions.delete(socket);
    });
    socket.on('message', (data) => {
      const payload = JSON.parse(String(data)) as { op: number; d: { token?: string; intents?: number } | null };
      if (payload.op === 1) {
        heartbeats.refresh();
        socket.send(JSON.stringify({ op: 11 }));
      } else if (payload.op === 2) {
        if (payload.d?.token !== options.token) return socket.close(4004, 'Authentication failed.');
        const intents = payload.d.intents ?? 0;
        if (options.messageContentAllowed === false && intents & INTENTS.messageContent)
          return socket.close(4014, 'Disallowed intent(s).');
        identifies.push({ intents });
        for (const listener of identifyListeners) listener();
        sessions.set(socket, { intents, seq: 0 });
        const guilds = options.guilds ?? [];
        dispatch(socket, 'READY', {
          v: 10,
          user: botUser,
          guilds: guilds.map((g) => ({ id: g.id, unavailable: true })),
          session_id: `session-${snowflake()}`,
          resume_gateway_url: `ws://127.0.0.1:${port()}`,
          shard: [0, 1],
          application: { id: botUser.id, flags: 0 },
        });
        if (intents & INTENTS.guilds)
          for (const guild of guilds) dispatch(socket, 'GUILD_CREATE', guildCreate(guild, botUser));
      } else if (payload.op === 6) {
        socket.send(JSON.stringify({ op: 9, d: false }));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (): number => (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port()}/api`,
    botUser,
    identifies,
    sent,
    edits,
    restCalls,
    attachmentDownloads,
    failNextEdit: (channelId, failure) =>
      editFailures.set(channelId, [...(editFailures.get(channelId) ?? []), failure]),
    pushMessage: (input) => {
      const message = createMessage(input);
      broadcastMessage(message);
      return message;
    },
    redeliverMessage: (message) => broadcastMessage(message),
    faultDownloads: (...faults) => downloadFaults.push(...faults),
    failNext: (channelId, failure) => failures.set(channelId, [...(failures.get(channelId) ?? []), failure]),
    refuseNextFile: (channelId, refusal) =>
      fileRefusals.set(channelId, [...(fileRefusals.get(channelId) ?? []), refusal]),
    waitForSent: (predicate, timeoutMs) => {
      const seen = sent.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = (m: SentMessage): boolean => {
          if (!predicate(m)) return false;
          waiters.delete(waiter);
          clearTimeout(timer);
          resolve(m);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const list = sent
            .map((m, i) => `  ${i + 1}. ${m.channelId}: ${JSON.stringify(m.message.content.slice(0, 200))}`)
            .join('\n');
          reject(
            new Error(
              `fake-discord: no matching Create Message within ${timeoutMs} ms; sent so far:\n${list || '  (nothing)'}`,
            ),
          );
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    interactionReplies,
    press: (input) => {
      const message = messages.get(input.messageId);
      if (!message) throw new Error(`fake-discord: no message ${input.messageId}`);
      const rows = (message.components ?? []) as { components: { custom_id: string }[] }[];
      if (!rows.some((row) => row.components.some((c) => c.custom_id === input.customId))) {
        throw new Error(
          `fake-discord: message ${input.messageId} has no button ${input.customId}; components: ${JSON.stringify(rows)}`,
        );
      }
      const id = snowflake();
      const token = `itoken-${id}`;
      const interaction = {
        id,
        application_id: botUser.id,
        type: 3,
        token,
        version: 1,
        locale: 'en-US',
        app_permissions: '0',
        entitlements: [],
        authorizing_integration_owners: {},
        channel_id: message.channel_id,
        channel: { id: message.channel_id, type: message.guild_id ? 0 : 1 },
        ...(message.guild_id
          ? {
              guild_id: message.guild_id,
              guild_locale: 'en-US',
              member: {
                user: input.user,
                roles: [],
                joined_at: new Date().toISOString(),
                deaf: false,
                mute: false,
                flags: 0,
                permissions: '0',
              },
            }
          : { user: input.user }),
        message: withoutReference(message),
        data: { custom_id: input.customId, component_type: 2 },
      };
      interactions.set(token, { id, atMs: Date.now(), called: false });
      for (const [socket] of sessions) dispatch(socket, 'INTERACTION_CREATE', interaction);
      return interaction;
    },
    onIdentify: (listener) => void identifyListeners.push(listener),
    holdNextInteractionCallback: () => {
      holdCallback = true;
    },
    dispatchInteraction: (interaction) => {
      for (const [socket] of sessions) dispatch(socket, 'INTERACTION_CREATE', interaction);
    },
    sessions: () => sessions.size,
    dropConnections: (code) => {
      for (const socket of wss.clients) socket.close(code, 'fake-discord: dropped');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of wss.clients) socket.terminate();
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Validates `components` as Discord does for what baton sends ("Message Components"): at most 5
 * action rows (type 1), each with 1-5 buttons (type 2) with a label ≤ 80, a style 1-4 and a
 * `custom_id` of 1-100 characters, unique in the message. @returns what is wrong, or undefined
 */
function invalidComponents(components: unknown): string | undefined {
  if (components === undefined) return undefined;
  if (!Array.isArray(components) || components.length > 5) return 'components must be at most 5 action rows';
  const ids = new Set<string>();
  for (const row of components as { type?: number; components?: Record<string, unknown>[] }[]) {
    if (row.type !== 1) return 'a top-level component must be an action row (type 1)';
    if (!Array.isArray(row.components) || row.components.length === 0 || row.components.length > 5)
      return 'an action row holds 1-5 buttons';
    for (const button of row.components) {
      if (button.type !== 2) return 'only buttons (type 2) are expected in these rows';
      if (typeof button.label !== 'string' || button.label.length === 0 || button.label.length > 80)
        return 'a button label is 1-80 characters';
      if (![1, 2, 3, 4].includes(button.style as number)) return 'a button with a custom_id has style 1-4';
      if (typeof button.custom_id !== 'string' || button.custom_id.length === 0 || button.custom_id.length > 100)
        return 'custom_id is 1-100 characters';
      if (ids.has(button.custom_id)) return 'custom_id must be unique in a message';
      ids.add(button.custom_id);
    }
  }
  return undefined;
}

/** A referenced message as Discord nests it: without its own `referenced_message`. */
function withoutReference(message: DiscordMessage): DiscordMessage {
  const { referenced_message: _nested, ...rest } = message;
  return rest;
}

function guildCreate(
  guild: { id: string; name: string; channelIds: string[] },
  botUser: DiscordUser,
): Record<string, unknown> {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: '1',
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: 0,
    preferred_locale: 'en-US',
    public_updates_channel_id: null,
    nsfw_level: 0,
    premium_progress_bar_enabled: false,
    features: [],
    roles: [
      {
        id: guild.id,
        name: '@everyone',
        permissions: '68608',
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    joined_at: new Date().toISOString(),
    large: false,
    unavailable: false,
    member_count: 2,
    members: [{ user: botUser, roles: [], joined_at: new Date().toISOString(), deaf: false, mute: false, flags: 0 }],
    channels: guild.channelIds.map((id, position) => ({
      id,
      type: 0,
      name: `channel-${position}`,
      position,
      permission_overwrites: [],
      nsfw: false,
      parent_id: null,
    })),
    threads: [],
    voice_states: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
  };
}

/** Where {@link readJson} puts the file parts of a multipart body, and the request's size. */
const FILES = Symbol('files');
const REQUEST_BYTES = Symbol('requestBytes');
/** Discord's default per-file limit without server boosts, and the request limit ("Uploading Files"). */
export const DISCORD_FILE_MAX_BYTES = 10 * 1024 * 1024;
export const DISCORD_REQUEST_MAX_BYTES = 25 * 1024 * 1024;

/**
 * The JSON body, or for multipart/form-data (parsed by undici's `Request.formData()`, the same
 * FormData encoding @discordjs/rest sends) the `payload_json` object with the file parts under
 * {@link FILES}.
 */
async function readJson(req: IncomingMessage): Promise<Record<string | symbol, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  recordReceived(`discord ${req.method ?? ''} ${req.url ?? ''}`, raw);
  const type = req.headers['content-type'] ?? '';
  if (type.startsWith('multipart/form-data')) {
    const form = await new Request('http://fake.invalid/', {
      method: 'POST',
      headers: { 'content-type': type },
      body: raw,
    }).formData();
    const payload = form.get('payload_json');
    const body = (typeof payload === 'string' ? JSON.parse(payload) : {}) as Record<string | symbol, unknown>;
    const files: { field: string; filename: string; content: Buffer }[] = [];
    for (const [field, value] of form.entries()) {
      if (typeof value === 'string') continue;
      const blob = value as Blob & { name?: string };
      files.push({ field, filename: blob.name ?? '', content: Buffer.from(await blob.arrayBuffer()) });
    }
    body[FILES] = files;
    body[REQUEST_BYTES] = raw.length;
    return body;
  }
  const text = raw.toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
