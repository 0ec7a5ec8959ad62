/**
 * `POST /admin/command` and `POST /admin/ask` of the control API: owner commands and `baton ask`
 * carried out by the service while embedded PGlite keeps the database to it. Both need the admin
 * token of `service.json`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';

/** Runs one owner command (`/runs`, `/cancel hr_…`, `/stop`) and returns the replies. */
export type AdminCommand = (text: string) => Promise<string[]>;

/**
 * One `baton ask` run carried out by the service (embedded PGlite keeps the database to it):
 * `onMessage` gets each message of the conversation as it is sent; the promise resolves with the
 * `--json` report once the run has ended and its messages went out. `signal` aborts when the
 * client goes away, and the run is then cancelled.
 */
export type AdminAsk = (
  text: string,
  files: readonly string[],
  onMessage: (text: string) => void,
  signal: AbortSignal,
  options?: { noWait?: boolean },
) => Promise<Record<string, unknown>>;

/**
 * Largest admin request body, in bytes: a `baton ask` task may be long (codex reads up to
 * 1,048,576 characters, up to 4 bytes each).
 */
const ADMIN_BODY_MAX_BYTES = 8 * 1024 * 1024;

/** Checks the bearer token and reads the `{"text": …, "files"?: […]}` body; answers 401/405 itself. */
function readAdminText(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  use: (text: unknown, files: unknown) => void,
): void {
  const given = Buffer.from(String(req.headers.authorization ?? '').replace(/^Bearer /, ''));
  const expected = Buffer.from(token);
  if (req.method !== 'POST' || given.length !== expected.length || !timingSafeEqual(given, expected)) {
    res.writeHead(req.method === 'POST' ? 401 : 405, { 'content-type': 'text/plain' }).end('refused\n');
    return;
  }
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
    if (body.length > ADMIN_BODY_MAX_BYTES) req.destroy();
  });
  req.on('end', () => {
    let parsed: { text?: unknown; files?: unknown } = {};
    try {
      parsed = JSON.parse(body) as { text?: unknown; files?: unknown };
    } catch {
      parsed = {};
    }
    use(parsed.text, parsed.files);
  });
}

/** Serves `POST /admin/ask`: the run's messages as NDJSON lines, then its report. */
export function handleAsk(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  ask: AdminAsk,
  logger: Logger,
): void {
  readAdminText(req, res, token, (text, files) => {
    const paths = files === undefined ? [] : files;
    if (
      typeof text !== 'string' ||
      !/^\/(run|codex|claude)\s/.test(text) ||
      !Array.isArray(paths) ||
      !paths.every((f) => typeof f === 'string' && f.startsWith('/'))
    ) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('expected {"text": "/run|/codex|/claude in:\\"DIR\\" TASK", "files"?: ["/absolute/path", …]}\n');
      return;
    }
    // Newline-delimited JSON: {"message": …} per message, then {"report": …}.
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort();
    });
    // `baton ask --no-wait`: a queued run is reported as such at once, and keeps its place.
    const noWait = req.headers['x-baton-no-wait'] === '1';
    ask(text, paths as string[], (message) => res.write(`${JSON.stringify({ message })}\n`), gone.signal, {
      noWait,
    }).then(
      (report) => res.end(`${JSON.stringify({ report })}\n`),
      (err: unknown) => {
        logger.error({ err }, 'ask through the service failed');
        res.end();
      },
    );
  });
}

/** Serves `POST /admin/command`: one owner command, its replies as JSON. */
export function handleAdmin(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  admin: AdminCommand,
  logger: Logger,
): void {
  readAdminText(req, res, token, (text) => {
    if (typeof text !== 'string' || !/^\/(runs|cancel|stop)\b/.test(text)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('expected {"text": "/runs | /cancel ID | /stop"}\n');
      return;
    }
    admin(text).then(
      (replies) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ replies })),
      (err: unknown) => {
        logger.error({ err }, 'admin command failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('admin command failed\n');
      },
    );
  });
}

/**
 * Serves `POST /admin/console-login` (admin token): a one-time login path of the web console
 * for `baton console`, as `{"path": "/login?token=…"}`.
 */
export function handleConsoleLogin(
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
  mintLoginPath: () => string,
): void {
  readAdminText(req, res, token, () => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: mintLoginPath() }));
  });
}
