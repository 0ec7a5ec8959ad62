/**
 * An HTTP tap between baton's grammY client and the fake Bot API server (test/fakes/fake-telegram.ts):
 * it forwards every call unchanged, notes the moment each update leaves for the adapter inside a
 * `getUpdates` answer, and can fail a share of `sendMessage` calls. The fake stays untouched, and
 * the timestamps are taken on the bench's own clock (`performance.now()`).
 */
import { Agent, createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from '../../fakes/loopback.js';

/** How an injected `sendMessage` failure looks to the client. */
export type InjectedFailure =
  /** The connection is cut before the fake sees the call (grammY `HttpError`). */
  | 'network'
  /** HTTP 500 with Telegram's error body (grammY `GrammyError`, error_code 500). */
  | 'server_error';

/** A running tap. */
export interface TelegramTap {
  /** Base URL to give baton as `TELEGRAM_API_ROOT`. */
  readonly url: string;
  /** `update_id` → when the `getUpdates` answer carrying it was written to the adapter, `performance.now()` ms. */
  readonly handedOutAtMs: ReadonlyMap<number, number>;
  /** `sendMessage` calls failed so far. */
  readonly injectedFailures: number;
  /** `sendMessage` calls seen so far (failed or forwarded). */
  readonly sendCalls: number;
  /** Fails every `round(1 / rate)`-th later `sendMessage` call (exactly `rate` of them). */
  failSendMessages(rate: number, kind: InjectedFailure): void;
  close(): Promise<void>;
}

/** Starts a tap on 127.0.0.1 forwarding to `upstreamUrl` (the fake's `url`). */
export async function startTelegramTap(upstreamUrl: string): Promise<TelegramTap> {
  const upstream = new URL(upstreamUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const handedOutAtMs = new Map<number, number>();
  let failure: { every: number; kind: InjectedFailure; seen: number } | undefined;
  let injectedFailures = 0;
  let sendCalls = 0;

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    const upstreamReq = request(
      {
        agent,
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host, 'content-length': String(body.length) },
      },
      (upstreamRes) => {
        const chunks: Buffer[] = [];
        upstreamRes.on('data', (chunk: Buffer) => chunks.push(chunk));
        upstreamRes.on('end', () => {
          const answer = Buffer.concat(chunks);
          if (res.destroyed || res.writableEnded) return;
          res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
          if (/\/getupdates$/i.test(req.url ?? '')) noteUpdates(answer);
          res.end(answer);
        });
      },
    );
    upstreamReq.on('error', () => res.destroy());
    // A client that goes away (a killed service) must not leave a long poll open at the fake,
    // or the fake would hand the next update to a dead connection.
    res.on('close', () => {
      if (!res.writableFinished) upstreamReq.destroy();
    });
    upstreamReq.end(body);
  };

  const noteUpdates = (answer: Buffer): void => {
    try {
      const parsed = JSON.parse(answer.toString('utf8')) as { ok?: boolean; result?: { update_id?: number }[] };
      if (!parsed.ok || !Array.isArray(parsed.result)) return;
      const now = performance.now();
      for (const update of parsed.result) {
        if (typeof update.update_id === 'number' && !handedOutAtMs.has(update.update_id))
          handedOutAtMs.set(update.update_id, now);
      }
    } catch {
      // not JSON: nothing to note
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (/\/sendmessage$/i.test(req.url ?? '')) {
        sendCalls += 1;
        if (failure && ++failure.seen % failure.every === 0) {
          injectedFailures += 1;
          if (failure.kind === 'network') {
            req.socket.destroy();
            return;
          }
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ ok: false, error_code: 500, description: 'Internal Server Error' }));
          return;
        }
      }
      forward(req, res, body);
    });
  });
  const listening = await listenOnLoopback(server);

  return {
    url: listening.url,
    handedOutAtMs,
    get injectedFailures() {
      return injectedFailures;
    },
    get sendCalls() {
      return sendCalls;
    },
    failSendMessages: (rate, kind) => {
      failure = { every: Math.max(1, Math.round(1 / rate)), kind, seen: 0 };
    },
    close: async () => {
      await listening.close();
      agent.destroy();
    },
  };
}
