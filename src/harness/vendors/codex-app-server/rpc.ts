/**
 * JSON-RPC 2.0 over codex app-server's stdio, one message a line (measured on codex-cli 0.171.0:
 * the server neither sends nor needs the `"jsonrpc":"2.0"` member; requests carry `id` and
 * `method`, responses `id` and `result` or `error`, notifications `method` only). Reading is done
 * by the run's stream (every stdout line is parsed and handed to {@link RpcPeer.receive}); this
 * side only writes and matches answers to questions.
 */

/** A JSON-RPC error object as the server sends it. */
export interface RpcError {
  code?: number;
  message: string;
}

import type { SessionRequest } from '../types.js';

/** A request the server sends to baton (approvals, questions): answered with a result or an error. */
export type ServerRequest = SessionRequest;

/** What baton's side of the connection does with a server request; undefined: not handled here. */
export type ServerRequestHandler = (request: ServerRequest) => Promise<unknown> | undefined;

/** The server refused a request of baton's: its JSON-RPC error. */
export class RpcRequestFailed extends Error {
  constructor(
    readonly method: string,
    readonly error: RpcError,
  ) {
    super(`codex app-server refused ${method}: ${error.message}`);
  }
}

/** Id prefix of the requests that start a run (see {@link RpcPeer.request}). */
const LAUNCH_ID_PREFIX = 'launch:';

/** Whether an answer's `id` is that of a request that starts the run. */
export function isLaunchAnswer(id: unknown): boolean {
  return typeof id === 'string' && id.startsWith(LAUNCH_ID_PREFIX);
}

/** JSON-RPC "method not found", for a server request nobody here answers. */
const METHOD_NOT_FOUND = -32601;

/** One JSON-RPC connection: requests out with their answers matched by id, server requests answered. */
export class RpcPeer {
  private nextId = 1;
  private readonly pending = new Map<string, { method: string; settle: (answer: unknown, error?: RpcError) => void }>();
  private closed = false;

  /**
   * @param writeLine writes one line (no newline) to the server's stdin.
   * @param onServerRequest answers a server request; one it does not handle gets "method not found".
   */
  constructor(
    private readonly writeLine: (line: string) => void,
    private readonly onServerRequest: ServerRequestHandler,
  ) {}

  /**
   * Sends a request.
   *
   * @param launch the request starts the run (the handshake, the first turn): its id is
   *   `launch:<n>`, so a refusal of it reads as the run's end in the stream ({@link isLaunchAnswer}).
   * @returns its `result`.
   * @throws RpcRequestFailed when the server answers with an error; Error when the connection
   *   closed first.
   */
  request<T>(method: string, params: unknown, launch = false): Promise<T> {
    if (this.closed) return Promise.reject(new Error(`codex app-server connection closed before ${method}`));
    const n = this.nextId++;
    const id = launch ? `${LAUNCH_ID_PREFIX}${n}` : n;
    const answer = new Promise<T>((resolve, reject) => {
      this.pending.set(String(id), {
        method,
        settle: (result, error) => (error ? reject(new RpcRequestFailed(method, error)) : resolve(result as T)),
      });
    });
    this.send({ id, method, params });
    return answer;
  }

  /** Sends a notification (no answer). */
  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { method } : { method, params });
  }

  /** Reads one parsed line of the server's stdout: an answer, a server request, or a notification (ignored here). */
  receive(message: unknown): void {
    if (typeof message !== 'object' || message === null) return;
    const m = message as { id?: unknown; method?: unknown; result?: unknown; error?: unknown; params?: unknown };
    const isId = typeof m.id === 'number' || typeof m.id === 'string';
    if (typeof m.method === 'string' && isId) {
      this.serve({ id: m.id as number | string, method: m.method, params: m.params });
      return;
    }
    if (!isId || m.method !== undefined) return;
    const key = String(m.id);
    const waiting = this.pending.get(key);
    if (!waiting) return;
    this.pending.delete(key);
    if (m.error !== undefined) waiting.settle(undefined, readError(m.error));
    else waiting.settle(m.result);
  }

  /** The connection is gone (stdin closed or the server exited): every open request fails. */
  close(): void {
    this.closed = true;
    for (const [id, waiting] of this.pending) {
      this.pending.delete(id);
      waiting.settle(undefined, { message: 'the connection closed before an answer' });
    }
  }

  private serve(request: ServerRequest): void {
    const answering = this.onServerRequest(request);
    if (!answering) {
      this.answer(request.id, undefined, {
        code: METHOD_NOT_FOUND,
        message: `baton does not answer ${request.method}`,
      });
      return;
    }
    answering.then(
      (result) => this.answer(request.id, result),
      (err: unknown) =>
        this.answer(request.id, undefined, { message: err instanceof Error ? err.message : String(err) }),
    );
  }

  private answer(id: number | string, result: unknown, error?: RpcError): void {
    if (this.closed) return;
    this.send(error ? { id, error } : { id, result });
  }

  private send(message: object): void {
    this.writeLine(JSON.stringify(message));
  }
}

function readError(raw: unknown): RpcError {
  const e = typeof raw === 'object' && raw !== null ? (raw as { code?: unknown; message?: unknown }) : {};
  return {
    ...(typeof e.code === 'number' ? { code: e.code } : {}),
    message: typeof e.message === 'string' ? e.message : JSON.stringify(raw),
  };
}
