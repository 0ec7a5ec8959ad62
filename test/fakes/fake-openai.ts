/**
 * A scripted fake of the OpenAI Responses API (`POST /v1/responses`) on 127.0.0.1, for the real
 * codex CLI (see test/support/codex-home.ts for pointing codex at it).
 *
 * What codex 0.171.0 needs, measured by running it (beyond shared/spec/VENDOR-CLI.md):
 * - `response.completed` must carry `response.id`; without it the turn fails with
 *   "failed to parse ResponseCompleted: missing field `id`".
 * - `response.usage`, when present, must have `total_tokens` ("missing field `total_tokens`");
 *   `input_tokens_details.cached_tokens` → `cached_input_tokens`,
 *   `output_tokens_details.reasoning_tokens` → `reasoning_output_tokens` in `turn.completed`.
 * - A stream that ends without `response.completed` fails the turn ("stream closed before
 *   response.completed"). `response.created` and the `event:` lines are optional.
 * - HTTP errors: 500 becomes `turn.failed` "We’re currently experiencing high demand, which may
 *   cause temporary errors." (the status is not named); 502/503/401 become "unexpected status
 *   503 Service Unavailable: <error.message>, url: …"; 429 "exceeded retry limit, last status:
 *   429 Too Many Requests"; 400 the raw body. With retries at 0 each is exactly one request.
 * - codex sends no other request to the provider (no `/v1/models`) in `exec`.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { isObject, listenOnLoopback, parseBody, readBody, RequestLog } from './loopback.js';
import { startSse, writeSseEvents, type SseEvent } from './sse.js';

/** Arguments of codex's shell tool `exec_command` (its schema as offered in `tools`). */
export interface ExecCommandArguments {
  /** Shell command line; codex runs it as `/bin/bash -lc '<cmd>'`. */
  cmd: string;
  /** Working directory. @default the turn's cwd */
  workdir?: string;
  /** How long codex waits for output before yielding, in ms (250–30000). @default 10000 */
  yield_time_ms?: number;
}

/** Token counts reported in `response.completed` (Responses API `usage`). */
export interface FakeUsage {
  input_tokens: number;
  cached_input_tokens?: number;
  output_tokens: number;
  reasoning_output_tokens?: number;
}

/** One scripted answer to one `POST /v1/responses`. */
export type FakeTurn =
  | { kind: 'message'; text: string; usage?: FakeUsage }
  | {
      kind: 'tool_call';
      name: 'exec_command';
      arguments: ExecCommandArguments;
      /** @default generated, `call_<n>` */
      callId?: string;
      usage?: FakeUsage;
    }
  | {
      kind: 'http_error';
      /** HTTP status, e.g. 500, 401, 429. */
      status: number;
      /** Raw response body. @default `{"error":{"message":"fake model error <status>",…}}` */
      body?: string;
      /** Extra response headers, e.g. `x-codex-primary-*` (test/fakes/limit-responses.ts). */
      headers?: Record<string, string>;
    };

/** A request the fake received, whatever its path. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/responses`. */
  path: string;
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

/** An item of a Responses API `input` array, e.g. `{ type: 'function_call_output', call_id, output }`. */
export interface ResponseInputItem {
  type?: string;
  [key: string]: unknown;
}

/** A running fake; see {@link startFakeOpenAI}. */
export interface FakeOpenAI {
  /** Origin, e.g. `http://127.0.0.1:40123`; the API lives under `${url}/v1`. */
  readonly url: string;
  /** Every request in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Appends turns; each `POST /v1/responses` takes the first one left. */
  enqueue(...turns: FakeTurn[]): void;
  /** Turns not used yet. */
  pendingTurns(): number;
  /** Answers used once the queue is empty (its argument's `status` is not decided yet). @default a message "ok" */
  setFallback(fallback: (request: RecordedRequest) => FakeTurn): void;
  /** Resolves with the first recorded request matching `predicate` (past or future). */
  waitForRequest(predicate: (request: RecordedRequest) => boolean, timeoutMs: number): Promise<RecordedRequest>;
  /** Stops listening and drops keep-alive connections. */
  close(): Promise<void>;
}

/** Options of {@link startFakeOpenAI}. */
export interface StartFakeOpenAIOptions {
  fallback?: (request: RecordedRequest) => FakeTurn;
}

const DEFAULT_USAGE: FakeUsage = {
  input_tokens: 100,
  cached_input_tokens: 0,
  output_tokens: 10,
  reasoning_output_tokens: 0,
};

/** The `input` items of a recorded `/v1/responses` request (empty for any other request). */
export function inputItemsOf(request: RecordedRequest): ResponseInputItem[] {
  const body = request.body;
  if (typeof body !== 'object' || body === null || !('input' in body)) return [];
  const input: unknown = body.input;
  return Array.isArray(input) ? input.filter((i): i is ResponseInputItem => typeof i === 'object' && i !== null) : [];
}

/** Starts the fake on an ephemeral port of 127.0.0.1. */
export async function startFakeOpenAI(options: StartFakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const queue: FakeTurn[] = [];
  const log = new RequestLog<RecordedRequest>('fake-openai');
  const requests = log.requests;
  let fallback = options.fallback ?? ((): FakeTurn => ({ kind: 'message', text: 'ok' }));
  let counter = 0;

  const record = (req: IncomingMessage, path: string, body: unknown, status: number, receivedAtMs: number): void => {
    const entry: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body,
      status,
      receivedAtMs,
    };
    log.record(entry);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const receivedAtMs = performance.now();
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const body = parseBody(await readBody(req));
    if (req.method !== 'POST' || path !== '/v1/responses') {
      record(req, path, body, 404, receivedAtMs);
      sendJson(res, 404, openAiError(`Invalid URL (${req.method ?? 'GET'} ${path})`, 'invalid_request_error'));
      return;
    }
    const pending: RecordedRequest = { method: 'POST', path, headers: req.headers, body, status: 200, receivedAtMs };
    const turn = queue.shift() ?? fallback(pending);
    counter += 1;
    if (turn.kind === 'http_error') {
      record(req, path, body, turn.status, receivedAtMs);
      const text = turn.body ?? JSON.stringify(openAiError(`fake model error ${turn.status}`, 'server_error'));
      res.writeHead(turn.status, { ...turn.headers, 'content-type': 'application/json' });
      res.end(text);
      return;
    }
    record(req, path, body, 200, receivedAtMs);
    const responseId = `resp_fake_${counter}`;
    const item = outputItem(turn, counter);
    const completed = {
      id: responseId,
      object: 'response',
      status: 'completed',
      model: modelOf(body),
      output: [item],
      usage: usageJson(turn.usage ?? DEFAULT_USAGE),
    };
    if (isObject(body) && body['stream'] === false) {
      sendJson(res, 200, completed);
      return;
    }
    const inProgress = { ...completed, status: 'in_progress', output: [], usage: null };
    const events: SseEvent[] = [
      { event: 'response.created', data: { type: 'response.created', sequence_number: 0, response: inProgress } },
      {
        event: 'response.output_item.done',
        data: { type: 'response.output_item.done', sequence_number: 1, output_index: 0, item },
      },
      { event: 'response.completed', data: { type: 'response.completed', sequence_number: 2, response: completed } },
    ];
    startSse(res);
    writeSseEvents(res, events);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, openAiError(`fake-openai crashed: ${String(error)}`, 'server_error'));
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

function outputItem(turn: Exclude<FakeTurn, { kind: 'http_error' }>, n: number): Record<string, unknown> {
  switch (turn.kind) {
    case 'message':
      return {
        type: 'message',
        id: `msg_fake_${n}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: turn.text, annotations: [] }],
      };
    case 'tool_call':
      return {
        type: 'function_call',
        id: `fc_fake_${n}`,
        status: 'completed',
        name: turn.name,
        call_id: turn.callId ?? `call_${n}`,
        arguments: JSON.stringify(turn.arguments),
      };
  }
}

function usageJson(usage: FakeUsage): Record<string, unknown> {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_output_tokens ?? 0 },
    total_tokens: usage.input_tokens + usage.output_tokens,
  };
}

function openAiError(message: string, type: string): Record<string, unknown> {
  return { error: { message, type, param: null, code: null } };
}

function modelOf(body: unknown): string {
  return isObject(body) && typeof body['model'] === 'string' ? body['model'] : 'fake-model';
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}
