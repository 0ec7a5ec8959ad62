/**
 * Live updates: `GET /events` streams Server-Sent Events (`event: run`, data: the run id) fed by
 * PostgreSQL `LISTEN baton_console`, which the database's triggers notify on every change of a
 * run's status or an approval (migration `console_notify`; not of a delivery, whose drain
 * would pay a serialized commit per row): any node's change
 * reaches every node's console. Without LISTEN (PGlite: one process) it falls back to asking the
 * database for the newest change every {@link POLL_MS}. A run page also learns of its transcript
 * growing: the size of its `events.jsonl` is looked at every {@link POLL_MS}.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import { securityHeaders } from './http.js';

/** The channel the triggers notify. */
export const CONSOLE_CHANNEL = 'baton_console';

/** How often a run page's events file, or (without LISTEN) the database, is looked at, in ms. */
export const POLL_MS = 1000;

/** How often a comment line keeps an idle stream open through proxies, in ms. */
const KEEPALIVE_MS = 25_000;

/** What the live feed needs. */
export interface LiveDeps {
  listen?: (channel: string, onNotify: (payload: string) => void) => Promise<() => Promise<void>>;
  /** Without `listen`: a value that changes whenever a run changes (the newest change's stamp). */
  latestChange: () => Promise<string>;
  logger: Logger;
}

/** The SSE clients of one console and their feed. */
export class LiveFeed {
  private readonly clients = new Set<(runId: string) => void>();
  private unlisten: (() => Promise<void>) | undefined;
  private poll: NodeJS.Timeout | undefined;
  private started: Promise<void> | undefined;

  constructor(private readonly deps: LiveDeps) {}

  /** Starts listening on the first client. */
  private start(): Promise<void> {
    this.started ??= (async () => {
      if (this.deps.listen) {
        this.unlisten = await this.deps.listen(CONSOLE_CHANNEL, (runId) => this.emit(runId));
        return;
      }
      let last = await this.deps.latestChange();
      this.poll = setInterval(() => {
        this.deps
          .latestChange()
          .then((now) => {
            if (now !== last) this.emit('');
            last = now;
          })
          .catch((err: unknown) => this.deps.logger.warn({ err }, 'console: could not look for run changes'));
      }, POLL_MS);
      this.poll.unref();
    })();
    return this.started;
  }

  private emit(runId: string): void {
    for (const client of this.clients) client(runId);
  }

  /** Serves one `GET /events[?run=ID]` until the browser goes away. */
  serve(req: IncomingMessage, res: ServerResponse, watch?: { runId: string; runDir: string }): void {
    res.writeHead(200, {
      ...securityHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    res.write(': live\n\n');
    const send = (runId: string): void => void res.write(`event: run\ndata: ${runId.replace(/[\r\n]/g, '')}\n\n`);
    this.clients.add(send);
    const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
    const watched = watch ? this.watchEvents(watch.runDir, () => send(watch.runId)) : undefined;
    this.start().catch((err: unknown) => {
      this.deps.logger.error({ err }, 'console: LISTEN failed; live updates stop');
      res.end();
    });
    req.on('close', () => {
      this.clients.delete(send);
      clearInterval(keepalive);
      if (watched) clearInterval(watched);
    });
  }

  /** Calls `changed` whenever the run's `events.jsonl` grows. */
  private watchEvents(runDir: string, changed: () => void): NodeJS.Timeout {
    let size = -1;
    const timer = setInterval(() => {
      stat(join(runDir, 'events.jsonl')).then(
        (s) => {
          if (size >= 0 && s.size !== size) changed();
          size = s.size;
        },
        () => undefined,
      );
    }, POLL_MS);
    timer.unref();
    return timer;
  }

  /** Ends every stream and the subscription. */
  async close(): Promise<void> {
    this.clients.clear();
    if (this.poll) clearInterval(this.poll);
    await this.unlisten?.();
  }
}
