/**
 * Plumbing the fake model servers share: a request log that tests can wait on, and a server
 * listening on an ephemeral port of 127.0.0.1 that closes its keep-alive sockets on `close()`.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { recordReceived } from './received.js';

/** What every recorded request has, for the timeout message. */
interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

/** Requests in arrival order, with waiters. */
export class RequestLog<T extends LoggedRequest> {
  readonly requests: T[] = [];
  private readonly waiters = new Set<{ predicate: (r: T) => boolean; resolve: (r: T) => void }>();

  /** @param name - the fake's name, for the timeout message. */
  constructor(private readonly name: string) {}

  record(entry: T): void {
    this.requests.push(entry);
    for (const waiter of this.waiters) {
      if (waiter.predicate(entry)) {
        this.waiters.delete(waiter);
        waiter.resolve(entry);
      }
    }
  }

  /**
   * Resolves with the first request matching `predicate`, past or future.
   *
   * @throws Error listing what was received when none matches within `timeoutMs`.
   */
  waitFor(predicate: (r: T) => boolean, timeoutMs: number): Promise<T> {
    const seen = this.requests.find(predicate);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        predicate,
        resolve: (r: T) => {
          clearTimeout(timer);
          resolve(r);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const seenPaths = this.requests.map((r) => `${r.method} ${r.path} → ${r.status}`).join('\n  ');
        reject(
          new Error(`${this.name}: no matching request within ${timeoutMs} ms; received:\n  ${seenPaths || '(none)'}`),
        );
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }
}

/** Listens on 127.0.0.1:0; `close()` stops listening and drops keep-alive connections. */
export async function listenOnLoopback(server: Server): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A request body, gunzipped when the client compressed it (codex does). */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const body = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
  recordReceived(`${req.method ?? ''} ${req.url ?? ''}`, body);
  return body;
}

/** The body as JSON; the raw text when it is not JSON; undefined when empty. */
export function parseBody(raw: Buffer): unknown {
  if (raw.length === 0) return undefined;
  const text = raw.toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
