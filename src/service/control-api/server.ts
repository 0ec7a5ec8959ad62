/**
 * The service's local control API on 127.0.0.1 only: `GET /health/live` and `GET /health/ready`
 * (the doctor's data as JSON; 200 when healthy, 503 when `baton doctor` would exit non-zero),
 * owner commands and `baton ask` (admin.ts), and tool approvals (approvals.ts). The chosen port
 * is recorded in `$BATON_HOME/service.json` (service-state.ts) so `baton doctor` can ask the
 * running service for its live view.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rename, rm, writeFile } from 'node:fs/promises';
import { BatonError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { exitCode, toDoctorJson, type DoctorReport } from '../../doctor/index.js';
import { handleAdmin, handleAsk, handleConsoleLogin, type AdminAsk, type AdminCommand } from './admin.js';
import { handleApproval, type ApprovalEndpoint } from './approvals.js';
import { readServiceState, serviceStatePath, type ServiceState } from './service-state.js';

/** A running health server. */
export interface ControlApi {
  port: number;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:`port` (0 = any free port) and writes the state file.
 *
 * @throws BatonError `port_unavailable` when the port is taken (EADDRINUSE) or privileged (EACCES).
 */
export async function startControlApi(options: {
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
  /** The web console, served on every path the control API does not use itself. @default none (404) */
  console?: { handle(req: IncomingMessage, res: ServerResponse): void; mintLoginPath(): string };
  logger: Logger;
}): Promise<ControlApi> {
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
    if (path === '/admin/console-login' && options.console) {
      handleConsoleLogin(req, res, adminToken, () => options.console!.mintLoginPath());
      return;
    }
    if (options.console && !CONTROL_PATHS.has(path ?? '')) {
      options.console.handle(req, res);
      return;
    }
    serveHealth(req, res, path, options);
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

/** `GET /health/live` and `GET /health/ready`; 405 for another method, 404 for another path. */
function serveHealth(
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
  options: { report: () => Promise<DoctorReport>; logger: Logger },
): void {
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
}

/** The paths the control API answers itself; every other one is the console's, when there is one. */
const CONTROL_PATHS: ReadonlySet<string> = new Set(['/health/live', '/health/ready', '/admin/command', '/admin/ask']);

/** How long closing the server waits for owner commands still being answered, in ms. */
const ADMIN_ANSWER_GRACE_MS = 10_000;

/** Resolves after `ms` without holding the process open. */
function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
