/**
 * The local web console: pages of runs, one run, and open approvals, served on the control API's
 * listener (127.0.0.1) and, when `[console] listen` says so, on one more address. Every page and
 * API needs a session (a login link spent, see sessions.ts); every POST must come from a page of
 * this console (Origin) and carry the session's CSRF token. Changes go through the same code as
 * the chat's: {@link ConsoleDeps.redeliver} is `/redeliver`, {@link ConsoleDeps.answerApproval}
 * the approval card's buttons.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { changeStamp } from '../../store/console-reads.js';
import { CONSOLE_REFUSALS } from '../../wording/console.js';
import { CONSOLE_CSS, CONSOLE_JS } from './assets.js';
import type { ConsoleDeps } from './deps.js';
import { html } from './html.js';
import {
  SESSION_COOKIE,
  cookieOf,
  hostAllowed,
  readForm,
  sameOrigin,
  securityHeaders,
  sendHtml,
  sendText,
} from './http.js';
import { LiveFeed } from './live.js';
import { layout } from './pages/layout.js';
import { handleLogin, routeGet, routePost } from './routes.js';
import { ConsoleSessions, csrfMatches } from './sessions.js';

/** A console, to mount on a listener. */
export interface WebConsole {
  /** Answers one request whose path the control API does not serve itself. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** A one-time login path (`/login?token=…`) for `baton console`. */
  mintLoginPath(): string;
  close(): Promise<void>;
}

/** Loopback names a browser on this machine reaches the console under, for a listener's port. */
function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

export type { ConsoleDeps } from './deps.js';

/** Builds the console. */
export function createConsole(deps: ConsoleDeps): WebConsole {
  const sessions = new ConsoleSessions(deps.nowMs);
  const live = new LiveFeed({
    ...(deps.listen ? { listen: deps.listen } : {}),
    latestChange: () => changeStamp(deps.db),
    logger: deps.logger,
  });
  const extra = (deps.extraHosts ?? []).map((h) => h.toLowerCase());
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const hosts = new Set([...loopbackHosts(req.socket.localPort ?? 0), ...extra]);
    if (!hostAllowed(req, hosts)) return sendText(res, 421, CONSOLE_REFUSALS.host);
    if (req.method === 'GET' && url.pathname === '/assets/console.js')
      return sendAsset(res, 'text/javascript', CONSOLE_JS);
    if (req.method === 'GET' && url.pathname === '/assets/console.css') return sendAsset(res, 'text/css', CONSOLE_CSS);
    if (req.method === 'GET' && url.pathname === '/login') return handleLogin(res, sessions, url);
    const sessionId = cookieOf(req, SESSION_COOKIE);
    const session = sessions.session(sessionId);
    if (!session) {
      req.resume();
      return sendHtml(res, 401, layout({ title: 'Sign in' }, html`<p>${CONSOLE_REFUSALS.signIn}</p>`));
    }
    const ctx = { deps, session, sessionId: sessionId!, sessions, live, url };
    if (req.method === 'GET') return routeGet(ctx, req, res);
    if (req.method !== 'POST') return sendText(res, 405, CONSOLE_REFUSALS.notFound, { allow: 'GET, POST' });
    if (!sameOrigin(req)) {
      req.resume();
      return sendText(res, 403, CONSOLE_REFUSALS.crossOrigin);
    }
    const form = await readForm(req);
    if (!form || !csrfMatches(session, form.get('csrf') ?? undefined)) return sendText(res, 403, CONSOLE_REFUSALS.csrf);
    return routePost(ctx, form, res);
  };
  return {
    handle: (req, res) => {
      handle(req, res).catch((err: unknown) => {
        deps.logger.error({ err, path: req.url?.split('?')[0] }, 'console request failed');
        if (!res.headersSent) sendText(res, 500, 'console error');
        else res.end();
      });
    },
    mintLoginPath: () => `/login?token=${sessions.mintLogin()}`,
    close: () => live.close(),
  };
}

function sendAsset(res: ServerResponse, type: string, body: string): void {
  res
    .writeHead(200, { ...securityHeaders(), 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-cache' })
    .end(body);
}
