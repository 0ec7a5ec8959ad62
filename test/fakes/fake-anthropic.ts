/**
 * A scripted fake of the Anthropic Messages API (`POST /v1/messages`) on 127.0.0.1, for the real
 * claude CLI (see test/support/claude-home.ts for pointing claude at it).
 *
 * What claude 2.1.197 does against it, measured by running it (beyond shared/spec/VENDOR-CLI.md):
 * - Each `claude -p` run sends `HEAD /` (a connection warm-up), then one
 *   `POST /v1/messages?beta=true` with `stream: true` per model turn. No other path is called.
 * - A stream that ends cleanly without content or `message_stop` makes claude repeat the turn as a
 *   non-streaming request (no `stream` field) and use that JSON answer as the turn. So every
 *   `POST /v1/messages`, streaming or not, takes the next scripted turn here.
 * - A stream cut mid-way (socket reset) is not retried that way: the run ends
 *   `is_error:true` with "API Error: Unable to connect to API (ECONNRESET)".
 * - HTTP errors, with `CLAUDE_CODE_MAX_RETRIES=0` exactly one request each, become the `result`
 *   text: 401 "Failed to authenticate. API Error: 401 <error.message>"; 500 and 529
 *   "API Error: 500 <error.message>. This is a server-side issue, …"; 429 "API Error: Request
 *   rejected (429) · <error.message>"; 400 "API Error: 400 <error.message>".
 * - Requests carry `x-api-key` (the configured dummy key), `anthropic-version: 2023-06-01`,
 *   `anthropic-beta`, and `x-claude-code-session-id` (see {@link sessionIdOf}).
 * - `messages` may hold `role: "system"` entries (beta `mid-conversation-system-…`), e.g. the
 *   agent list in a resumed conversation.
 * - The answer's `usage` becomes the `result.usage` claude prints, summed over the run's turns.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { isObject, listenOnLoopback, parseBody, readBody, RequestLog } from './loopback.js';
import { startSse, writeSseEvents, type SseEvent } from './sse.js';

/** Token counts reported for one answer (Messages API `usage`). */
export interface FakeAnthropicUsage {
  /** Uncached input tokens. */
  input_tokens: number;
  output_tokens: number;
  /** @default 0 */
  cache_read_input_tokens?: number;
  /** @default 0 */
  cache_creation_input_tokens?: number;
}

/** One scripted answer to one model call (`POST /v1/messages`). */
export type FakeAnthropicTurn =
  | {
      kind: 'message';
      text: string;
      usage?: FakeAnthropicUsage;
      /** Extra response headers, e.g. the `anthropic-ratelimit-unified-*` ones (test/fakes/limit-responses.ts). */
      headers?: Record<string, string>;
      /** The answer waits for this (the call stays open meanwhile): a turn the test keeps running. @default none */
      gate?: Promise<unknown>;
    }
  | {
      kind: 'tool_use';
      /** Tool name as claude offers it in `tools`, e.g. `Bash`, `Write`. */
      name: string;
      /** The tool's input; for `Bash`: `{ command, description? }`. */
      input: Record<string, unknown>;
      /** @default generated, `toolu_fake_<n>` */
      id?: string;
      /** A text block sent before the tool_use block. @default none */
      text?: string;
      usage?: FakeAnthropicUsage;
    }
  | {
      kind: 'http_error';
      /** HTTP status, e.g. 401, 500, 529. */
      status: number;
      /**
       * Raw response body.
       * @default `{"type":"error","error":{"type":<Anthropic error type for status>,"message":"fake <type>"}}`
       */
      body?: string;
      /** Extra response headers, e.g. `retry-after` and `anthropic-ratelimit-unified-*`. */
      headers?: Record<string, string>;
    };

/** A request the fake received, whatever its path. */
export interface RecordedAnthropicRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string;
  /** The query string without `?`, e.g. `beta=true`; empty when none. */
  query: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; the raw text when it is not JSON; `undefined` when empty. */
  body: unknown;
  /** The HTTP status the fake answered with. */
  status: number;
  /**
   * `performance.now()` of the fake's process when the request's headers had arrived, before its
   * body was read: the moment the CLI's call reached the server, not when the fake's event loop
   * got round to the whole body.
   */
  receivedAtMs: number;
}

/** One entry of a Messages API request's `messages` array. */
export interface AnthropicMessageParam {
  /** `system` only through claude's mid-conversation-system beta. */
  role: 'user' | 'assistant' | 'system';
  /** A plain string or content blocks (`text`, `tool_use`, `tool_result`, …). */
  content: string | Array<{ type: string; [key: string]: unknown }>;
}

/** A running fake; see {@link startFakeAnthropic}. */
export interface FakeAnthropic {
  /** Origin, e.g. `http://127.0.0.1:40123`; use it as `ANTHROPIC_BASE_URL` (no `/v1`). */
  readonly url: string;
  /** Every request in arrival order. */
  readonly requests: readonly RecordedAnthropicRequest[];
  /** Appends turns; each model call takes the first one left. */
  enqueue(...turns: FakeAnthropicTurn[]): void;
  /** Turns not used yet. */
  pendingTurns(): number;
  /** Answers used once the queue is empty (its argument's `status` is not decided yet). @default a message "ok" */
  setFallback(fallback: (request: RecordedAnthropicRequest) => FakeAnthropicTurn): void;
  /** Resolves with the first recorded request matching `predicate` (past or future). */
  waitForRequest(
    predicate: (request: RecordedAnthropicRequest) => boolean,
    timeoutMs: number,
  ): Promise<RecordedAnthropicRequest>;
  /** Stops listening and drops keep-alive connections. */
  close(): Promise<void>;
}

/** Options of {@link startFakeAnthropic}. */
export interface StartFakeAnthropicOptions {
  /** @default a message "ok" */
  fallback?: (request: RecordedAnthropicRequest) => FakeAnthropicTurn;
}

const DEFAULT_USAGE: Required<FakeAnthropicUsage> = {
  input_tokens: 100,
  output_tokens: 10,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};

/** Anthropic's error `type` per HTTP status (docs.anthropic.com, "Errors"). */
const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

/** Whether `request` is a model call (`POST /v1/messages`, streaming or not). */
export function isMessagesCall(request: Pick<RecordedAnthropicRequest, 'method' | 'path'>): boolean {
  return request.method === 'POST' && request.path === '/v1/messages';
}

/** The `messages` of a recorded `/v1/messages` request (empty for any other request). */
export function messagesOf(request: RecordedAnthropicRequest): AnthropicMessageParam[] {
  const body = request.body;
  if (!isObject(body) || !Array.isArray(body['messages'])) return [];
  return body['messages'].filter(
    (m): m is AnthropicMessageParam =>
      isObject(m) && typeof m['role'] === 'string' && (typeof m['content'] === 'string' || Array.isArray(m['content'])),
  );
}

/** All `text` of a message's content, in order (a plain-string content is one text). */
export function textsOf(message: AnthropicMessageParam): string[] {
  if (typeof message.content === 'string') return [message.content];
  return message.content.flatMap((block) =>
    block.type === 'text' && typeof block['text'] === 'string' ? [block['text']] : [],
  );
}

/**
 * The claude session a model call belongs to: header `x-claude-code-session-id`, which
 * claude 2.1.197 sends on every call (measured); equal to `system/init.session_id`, and kept by
 * `--resume`.
 */
export function sessionIdOf(request: RecordedAnthropicRequest): string | undefined {
  const value = request.headers['x-claude-code-session-id'];
  return typeof value === 'string' ? value : undefined;
}

/** Starts the fake on an ephemeral port of 127.0.0.1. */
export async function startFakeAnthropic(options: StartFakeAnthropicOptions = {}): Promise<FakeAnthropic> {
  const queue: FakeAnthropicTurn[] = [];
  const log = new RequestLog<RecordedAnthropicRequest>('fake-anthropic');
  const requests = log.requests;
  let fallback = options.fallback ?? ((): FakeAnthropicTurn => ({ kind: 'message', text: 'ok' }));
  let counter = 0;

  const record = (entry: RecordedAnthropicRequest): void => {
    log.record(entry);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAtMs = performance.now();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const body = parseBody(await readBody(req));
    const base = {
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      headers: req.headers,
      body,
      receivedAtMs,
    };
    counter += 1;
    const requestId = `req_fake_${counter}`;

    if (method === 'HEAD' || (method === 'GET' && url.pathname === '/')) {
      // claude warms the connection up with `HEAD /`; any 2xx will do.
      record({ ...base, status: 200 });
      res.writeHead(200, { 'content-type': 'text/plain', 'request-id': requestId });
      res.end(method === 'HEAD' ? undefined : 'fake-anthropic\n');
      return;
    }
    if (!isMessagesCall(base)) {
      record({ ...base, status: 404 });
      sendJson(
        res,
        404,
        anthropicError('not_found_error', `Not found: ${method} ${url.pathname}`, requestId),
        requestId,
      );
      return;
    }
    const turn = queue.shift() ?? fallback({ ...base, status: 200 });
    if (turn.kind === 'http_error') {
      record({ ...base, status: turn.status });
      const type = ERROR_TYPES[turn.status] ?? 'api_error';
      res.writeHead(turn.status, { ...turn.headers, 'content-type': 'application/json', 'request-id': requestId });
      res.end(turn.body ?? JSON.stringify(anthropicError(type, `fake ${type}`, requestId)));
      return;
    }
    record({ ...base, status: 200 });
    if (turn.kind === 'message' && turn.gate) await turn.gate;
    const message = assistantMessage(turn, counter, modelOf(body));
    if (isObject(body) && body['stream'] === true) {
      startSse(res, 200, turn.kind === 'message' ? turn.headers : {});
      writeSseEvents(res, streamEvents(message));
    } else {
      sendJson(res, 200, message, requestId);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(
          res,
          500,
          anthropicError('api_error', `fake-anthropic crashed: ${String(error)}`, 'req_fake_crash'),
          'req_fake_crash',
        );
      else res.destroy();
    });
  });
  const listening = await listenOnLoopback(server);

  return {
    url: listening.url,
    requests,
    enqueue: (...turns) => void queue.push(...turns),
    pendingTurns: () => queue.length,
    setFallback: (next) => void (fallback = next),
    waitForRequest: (predicate, timeoutMs) => log.waitFor(predicate, timeoutMs),
    close: listening.close,
  };
}

type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** A Messages API response body (`type: "message"`). */
interface AssistantMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: 'end_turn' | 'tool_use';
  stop_sequence: null;
  usage: Required<FakeAnthropicUsage>;
}

function assistantMessage(
  turn: Exclude<FakeAnthropicTurn, { kind: 'http_error' }>,
  n: number,
  model: string,
): AssistantMessage {
  const usage = { ...DEFAULT_USAGE, ...turn.usage };
  const common = {
    id: `msg_fake_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    stop_sequence: null,
    usage,
  } as const;
  if (turn.kind === 'message') {
    return { ...common, content: [{ type: 'text', text: turn.text }], stop_reason: 'end_turn' };
  }
  const content: ContentBlock[] = [];
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  content.push({ type: 'tool_use', id: turn.id ?? `toolu_fake_${n}`, name: turn.name, input: turn.input });
  return { ...common, content, stop_reason: 'tool_use' };
}

/** The SSE frames of a streamed answer (docs.anthropic.com, "Streaming Messages"). */
function streamEvents(message: AssistantMessage): SseEvent[] {
  const frame = (type: string, data: Record<string, unknown>): SseEvent => ({ event: type, data: { type, ...data } });
  const events: SseEvent[] = [
    frame('message_start', {
      message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
    }),
  ];
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(frame('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      events.push(frame('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } }));
    } else {
      events.push(
        frame('content_block_start', {
          index,
          content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
        }),
      );
      events.push(
        frame('content_block_delta', {
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        }),
      );
    }
    events.push(frame('content_block_stop', { index }));
  });
  events.push(
    frame('message_delta', {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    }),
    frame('message_stop', {}),
  );
  return events;
}

function anthropicError(type: string, message: string, requestId: string): Record<string, unknown> {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

function modelOf(body: unknown): string {
  return isObject(body) && typeof body['model'] === 'string' ? body['model'] : 'claude-fake';
}

function sendJson(res: ServerResponse, status: number, value: unknown, requestId: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': requestId });
  res.end(JSON.stringify(value));
}
