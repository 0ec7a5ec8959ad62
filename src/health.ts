/**
 * The service's local HTTP surface: `GET /health/live` and `GET /health/ready` (the doctor's
 * data as JSON; 200 when healthy, 503 when `baton doctor` would exit non-zero), on 127.0.0.1
 * only. The chosen port is recorded in `$BATON_HOME/service.json` so `baton doctor` can ask the
 * running service for its live view.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatonError } from './core/errors.js';
import type { Logger } from './core/logger.js';
import { exitCode, toDoctorJson, type DoctorReport } from './doctor/index.js';
import type { ApprovalAnswer, ApprovalRequest } from './harness/approvals.js';
import type { RunRow } from './store/schema.js';

/** What the running service records about itself. */
export interface ServiceState {
  pid: number;
  host: string;
  /** Port of the health server on 127.0.0.1. */
  port: number;
  startedAt: string;
  /**
   * Bearer token of `POST /admin/command`. The file is 0600, so only the user baton runs as can
   * read it and send commands; other local users reach the port but not the token.
   */
  adminToken: string;
}

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
 * The approvals side of the HTTP surface, for the per-run permission-prompt server: `authorize`
 * checks the run's own token; `request` waits (long poll) for a decision.
 */
export interface ApprovalEndpoint {
  authorize(runId: string, token: string): Promise<RunRow | undefined>;
  request(run: RunRow, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/**
 * Largest approval request body, in bytes: one tool call's input as the model wrote it. A model
 * turn is at most tens of thousands of output tokens (a few hundred KB of text, even JSON-escaped),
 * so 1 MiB holds any real request; a larger body is refused (413) and the call denied.
 */
export const APPROVAL_BODY_MAX_BYTES = 1024 * 1024;

/** Header naming the run whose token `Authorization` carries, so the token is checked before the body is read. */
export const APPROVAL_RUN_HEADER = 'x-baton-run-id';

/**
 * `POST /approvals/request` with `Authorization: Bearer <run token>`, `X-Baton-Run-Id: <run id>`
 * and `{"runId", "requestId", "tool", "input"}`: 200 with an {@link ApprovalAnswer}; 401 for a
 * wrong token, a missing run id header, a run that asks no approvals, or a body naming another
 * run; 413 for a body over {@link APPROVAL_BODY_MAX_BYTES}; 400 for a malformed body. The token is
 * checked before any of the body is read, so only the run's own server can make the service
 * read (and hold) a body.
 */
function handleApproval(req: IncomingMessage, res: ServerResponse, endpoint: ApprovalEndpoint, logger: Logger): void {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const refuse = (status: number, text: string): void => {
    // The rest of an unread body is not wanted: the connection closes after the answer.
    res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end(text, () => req.destroy());
  };
  const headerRunId = req.headers[APPROVAL_RUN_HEADER];
  const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  void (async () => {
    const run =
      typeof headerRunId === 'string' && token !== '' ? await endpoint.authorize(headerRunId, token) : undefined;
    if (!run) {
      refuse(401, 'refused\n');
      return;
    }
    if (Number(req.headers['content-length'] ?? 0) > APPROVAL_BODY_MAX_BYTES) {
      refuse(413, `a permission request is at most ${APPROVAL_BODY_MAX_BYTES} bytes\n`);
      return;
    }
    const body = await readCapped(req, APPROVAL_BODY_MAX_BYTES);
    if (body === undefined) {
      refuse(413, `a permission request is at most ${APPROVAL_BODY_MAX_BYTES} bytes\n`);
      return;
    }
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(body) as Record<string, unknown>;
    } catch {
      parsed = {};
    }
    const { runId, requestId, tool, input } = parsed;
    if (
      typeof runId !== 'string' ||
      typeof requestId !== 'string' ||
      typeof tool !== 'string' ||
      typeof input !== 'object' ||
      input === null ||
      Array.isArray(input)
    ) {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('expected {"runId", "requestId", "tool", "input": {…}}\n');
      return;
    }
    if (runId !== run.id) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('refused\n');
      return;
    }
    const answer = await endpoint.request(
      run,
      { runId, requestId, tool, input: input as Record<string, unknown> },
      gone.signal,
    );
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  })().catch((err: unknown) => {
    logger.error({ err }, 'approval request failed');
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('approval request failed\n');
  });
}

/** The whole body as UTF-8, or undefined as soon as it passes `maxBytes` (the rest is not read). */
function readCapped(req: IncomingMessage, maxBytes: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const onData = (chunk: Buffer): void => {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        req.off('data', onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

/** `$BATON_HOME/service.json`. */
export function serviceStatePath(batonHome: string): string {
  return join(batonHome, 'service.json');
}

/** Reads the state file, or undefined when absent or unreadable. */
export async function readServiceState(batonHome: string): Promise<ServiceState | undefined> {
  try {
    return JSON.parse(await readFile(serviceStatePath(batonHome), 'utf8')) as ServiceState;
  } catch {
    return undefined;
  }
}

/** A running health server. */
export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:`port` (0 = any free port) and writes the state file.
 *
 * @throws BatonError `port_unavailable` when the port is taken (EADDRINUSE) or privileged (EACCES).
 */
export async function startHealthServer(options: {
  port: number;
  batonHome: string;
  host: string;
  startedAt: Date;
  report: () => Promise<DoctorReport>;
  /** Owner commands for the CLI while embedded PGlite keeps the database to this process. */
  admin: AdminCommand;
  /** `baton ask` through this process, for the same reason. */
  ask?: AdminAsk;
  /** Tool approvals of claude runs (`POST /approvals/request`, per-run token). @default none (404) */
  approvals?: ApprovalEndpoint;
  logger: Logger;
}): Promise<HealthServer> {
  const adminToken = randomBytes(24).toString('hex');
  // Responses to owner commands (`POST /admin/command`) not yet sent; see close().
  const answering = new Set<ServerResponse>();
  let allAnswered: (() => void) | undefined;
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/admin/command') {
      answering.add(res);
      res.once('close', () => {
        answering.delete(res);
        if (answering.size === 0) allAnswered?.();
      });
      handleAdmin(req, res, adminToken, options.admin, options.logger);
      return;
    }
    if (path === '/approvals/request' && options.approvals) {
      handleApproval(req, res, options.approvals, options.logger);
      return;
    }
    if (path === '/admin/ask' && options.ask) {
      handleAsk(req, res, adminToken, options.ask, options.logger);
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (path === '/health/live') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path !== '/health/ready') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    options
      .report()
      .then((report) => {
        res
          .writeHead(exitCode(report) === 0 ? 200 : 503, { 'content-type': 'application/json' })
          .end(toDoctorJson(report));
      })
      .catch((err: unknown) => {
        options.logger.error({ err }, 'health report failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('health report failed\n');
      });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => resolve());
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES') {
      throw new BatonError(
        'port_unavailable',
        `BATON_HTTP_PORT=${options.port}: 127.0.0.1:${options.port} is ${code === 'EADDRINUSE' ? 'already in use' : 'not allowed for this user'}. ` +
          'Pick another port, or unset BATON_HTTP_PORT to use a free one.',
        { cause: err, details: { port: options.port } },
      );
    }
    throw err;
  }
  const port = (server.address() as AddressInfo).port;
  const state: ServiceState = {
    pid: process.pid,
    host: options.host,
    port,
    startedAt: options.startedAt.toISOString(),
    adminToken,
  };
  const path = serviceStatePath(options.batonHome);
  await writeFile(`${path}.tmp`, JSON.stringify(state), { mode: 0o600 });
  await rename(`${path}.tmp`, path);
  return {
    port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // An owner command being answered gets its answer first: `baton cancel` sent to a
      // `baton ask` ends that ask's run, and the ask then closes this server — cutting the reply
      // made the command fall back to the database and say the run had "already finished".
      if (answering.size > 0) {
        const answered = new Promise<void>((resolve) => (allAnswered = resolve));
        await Promise.race([answered, delay(ADMIN_ANSWER_GRACE_MS)]);
      }
      // Open connections (a permission request's long poll) would hold close() for their whole wait.
      server.closeAllConnections();
      await closed;
      // By its token, not its pid: a later start with the same pid (a container's pid 1, or a
      // second server of this process) wrote a state of its own, which this one must leave.
      const current = await readServiceState(options.batonHome);
      if (current?.adminToken === adminToken) await rm(path, { force: true });
    },
  };
}

/** How long closing the server waits for owner commands still being answered, in ms. */
const ADMIN_ANSWER_GRACE_MS = 10_000;

/** Resolves after `ms` without holding the process open. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

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

function handleAsk(req: IncomingMessage, res: ServerResponse, token: string, ask: AdminAsk, logger: Logger): void {
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

function handleAdmin(
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
