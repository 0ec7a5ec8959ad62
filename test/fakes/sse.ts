/**
 * Server-sent events on a plain `node:http` response (WHATWG HTML, "Server-sent events").
 * OpenAI's Responses API streams as `event: <type>` + `data: <json>` frames; codex 0.171.0 also
 * accepts frames without the `event:` line, but the fakes send both, like the real API.
 */
import type { ServerResponse } from 'node:http';

/** One SSE frame; `data` is serialised as a single line of JSON. */
export interface SseEvent {
  /** The `event:` field; for OpenAI streams the same string as `data.type`. */
  event: string;
  data: unknown;
}

/** Sends the status line and headers of an event stream. */
export function startSse(res: ServerResponse, status = 200, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

/** Serialises one frame (`event:` + `data:` lines and the blank line that ends it). */
export function formatSseEvent({ event, data }: SseEvent): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Writes frames and ends the response. */
export function writeSseEvents(res: ServerResponse, events: readonly SseEvent[]): void {
  for (const event of events) res.write(formatSseEvent(event));
  res.end();
}
