/** The console's routes: which page or action a signed-in request gets. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRunId } from '../../core/ids.js';
import { foldTranscript } from '../../harness/vendors/transcript.js';
import {
  deliveriesOfRun,
  fleetCounts,
  filterChoices,
  getRunRow,
  listRuns,
  openApprovals,
  type RunFilter,
} from '../../store/console-reads.js';
import { ApprovalStore } from '../../store/approvals-repo.js';
import { CONSOLE_REFUSALS, CONSOLE_SIGNED_IN } from '../../wording/console.js';
import type { ConsoleDeps } from './deps.js';
import { html } from './html.js';
import { clearedCookie, redirect, securityHeaders, sendHtml, sendText, sessionCookie } from './http.js';
import type { LiveFeed } from './live.js';
import { approvalsPage } from './pages/approvals-page.js';
import { layout } from './pages/layout.js';
import { runPage } from './pages/run-page.js';
import { RUNS_PER_PAGE, runsPage } from './pages/runs-page.js';
import { EVENTS_PER_PAGE, MAX_SHOWN_PATCH_BYTES, readEventsPage, readRunFile, runDirOf } from './run-files.js';
import { SESSION_TTL_MS, answerOf, rememberAnswer, type ConsoleSession, type ConsoleSessions } from './sessions.js';

/** What a route gets of a signed-in request. */
export interface RouteContext {
  deps: ConsoleDeps;
  session: ConsoleSession;
  sessionId: string;
  sessions: ConsoleSessions;
  live: LiveFeed;
  url: URL;
}

/** `GET /login?token=…`: spends the token; the session cookie goes with a page that moves on to /runs. */
export function handleLogin(res: ServerResponse, sessions: ConsoleSessions, url: URL): void {
  const sessionId = sessions.redeem(url.searchParams.get('token') ?? '');
  if (!sessionId) {
    sendHtml(res, 403, layout({ title: 'Sign in' }, html`<p>${CONSOLE_REFUSALS.loginUsed}</p>`));
    return;
  }
  // A page, not a redirect: the next request then starts on this origin, so the SameSite=Strict
  // cookie goes with it even when the link was opened from another site's page.
  const page = html`<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="0;url=/runs"><title>${CONSOLE_SIGNED_IN.title}</title></head>
<body><p>${CONSOLE_SIGNED_IN.body} <a href="/runs">${CONSOLE_SIGNED_IN.link}</a></p></body></html>`;
  sendHtml(res, 200, page, { 'set-cookie': sessionCookie(sessionId, SESSION_TTL_MS) });
}

/** The run id of `/runs/ID…`, when it has baton's own shape (it names a directory). */
function runIdOf(segment: string | undefined): string | undefined {
  return segment !== undefined && isRunId(segment) ? segment : undefined;
}

/** Serves a signed-in GET. */
export async function routeGet(ctx: RouteContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const parts = ctx.url.pathname.split('/').filter(Boolean);
  if (parts.length === 0) return redirect(res, '/runs');
  if (parts[0] === 'runs' && parts.length === 1) return showRuns(ctx, res);
  if (parts[0] === 'approvals' && parts.length === 1) return showApprovals(ctx, res);
  if (parts[0] === 'events' && parts.length === 1) {
    const runId = runIdOf(ctx.url.searchParams.get('run') ?? undefined);
    ctx.live.serve(req, res, runId ? { runId, runDir: runDirOf(ctx.deps.batonHome, runId) } : undefined);
    return;
  }
  const runId = parts[0] === 'runs' ? runIdOf(parts[1]) : undefined;
  if (runId && parts.length === 2) return showRun(ctx, runId, res);
  if (runId && parts.length === 3 && (parts[2] === 'patch' || parts[2] === 'result.md')) {
    return download(ctx, runId, parts[2], res);
  }
  return sendText(res, 404, CONSOLE_REFUSALS.notFound);
}

async function showRuns(ctx: RouteContext, res: ServerResponse): Promise<void> {
  const q = ctx.url.searchParams;
  const filter: RunFilter = {};
  for (const key of ['status', 'vendor', 'node', 'conversation'] as const) {
    const value = q.get(key);
    if (value) filter[key] = value;
  }
  const pageNumber = Math.max(0, Math.min(100_000, Number.parseInt(q.get('page') ?? '0', 10) || 0));
  const { db } = ctx.deps;
  const [page, counts, choices] = await Promise.all([
    listRuns(db, filter, RUNS_PER_PAGE, pageNumber * RUNS_PER_PAGE),
    fleetCounts(db),
    filterChoices(db),
  ]);
  sendHtml(
    res,
    200,
    runsPage({ csrf: ctx.session.csrfToken, filter, page, pageNumber, counts, choices, nowMs: ctx.deps.nowMs() }),
  );
}

async function showRun(ctx: RouteContext, runId: string, res: ServerResponse): Promise<void> {
  const { deps } = ctx;
  const run = await getRunRow(deps.db, runId);
  if (!run) return sendText(res, 404, CONSOLE_REFUSALS.noRun(runId));
  const runDir = runDirOf(deps.batonHome, runId);
  const from = Math.max(0, Number.parseInt(ctx.url.searchParams.get('events') ?? '0', 10) || 0);
  const [events, patch, result, approvals, rows] = await Promise.all([
    readEventsPage(runDir, from, EVENTS_PER_PAGE),
    readRunFile(runDir, `${runId}.patch`),
    readRunFile(runDir, 'result.md'),
    new ApprovalStore(deps.db).ofRun(runId),
    deliveriesOfRun(deps.db, runId),
  ]);
  const reader = deps.transcriptOf(run.vendor);
  const transcript =
    events && reader
      ? {
          steps: foldTranscript(events.events.flatMap((e) => reader(e))),
          from,
          to: Math.min(events.total, from + EVENTS_PER_PAGE),
          total: events.total,
          perPage: EVENTS_PER_PAGE,
        }
      : undefined;
  const flash = answerOf(ctx.session, ctx.url.searchParams.get('said'));
  sendHtml(
    res,
    200,
    runPage({
      csrf: ctx.session.csrfToken,
      ...(flash ? { flash } : {}),
      run,
      nowMs: deps.nowMs(),
      ...(transcript ? { transcript } : {}),
      approvals,
      ...(patch ? { patch: patch.subarray(0, MAX_SHOWN_PATCH_BYTES).toString('utf8') } : {}),
      hasResult: result !== undefined,
      deliveries: rows,
    }),
  );
}

async function download(
  ctx: RouteContext,
  runId: string,
  which: 'patch' | 'result.md',
  res: ServerResponse,
): Promise<void> {
  const name = which === 'patch' ? `${runId}.patch` : 'result.md';
  const bytes = await readRunFile(runDirOf(ctx.deps.batonHome, runId), name);
  if (!bytes)
    return sendText(res, 404, which === 'patch' ? CONSOLE_REFUSALS.noPatch(runId) : CONSOLE_REFUSALS.noResult(runId));
  res
    .writeHead(200, {
      ...securityHeaders(),
      // Served as a download of plain bytes, never rendered: the file holds repository text.
      'content-type': which === 'patch' ? 'text/x-diff; charset=utf-8' : 'text/markdown; charset=utf-8',
      'content-disposition': `attachment; filename="${name}"`,
    })
    .end(bytes);
}

async function showApprovals(ctx: RouteContext, res: ServerResponse): Promise<void> {
  const flash = answerOf(ctx.session, ctx.url.searchParams.get('said'));
  sendHtml(res, 200, approvalsPage(ctx.session.csrfToken, await openApprovals(ctx.deps.db), flash));
}

/** Serves a signed-in POST whose origin and CSRF token were checked. */
export async function routePost(ctx: RouteContext, form: URLSearchParams, res: ServerResponse): Promise<void> {
  const parts = ctx.url.pathname.split('/').filter(Boolean);
  if (parts.length === 1 && parts[0] === 'logout') {
    ctx.sessions.end(ctx.sessionId);
    return sendHtml(res, 200, layout({ title: 'Signed out' }, html`<p>${CONSOLE_REFUSALS.signIn}</p>`), {
      'set-cookie': clearedCookie(),
    });
  }
  const runId = parts[0] === 'runs' ? runIdOf(parts[1]) : undefined;
  if (
    runId &&
    parts.length === 5 &&
    parts[2] === 'deliveries' &&
    parts[4] === 'redeliver' &&
    /^\d{1,18}$/.test(parts[3]!)
  ) {
    const said = rememberAnswer(ctx.session, await ctx.deps.redeliver(parts[3]!));
    return redirect(res, `/runs/${runId}?said=${said}`);
  }
  if (parts.length === 2 && parts[0] === 'approvals' && /^\d{1,18}$/.test(parts[1]!) && ctx.deps.answerApproval) {
    const decision = form.get('decision');
    if (decision !== 'allow' && decision !== 'allow_run' && decision !== 'deny')
      return sendText(res, 400, CONSOLE_REFUSALS.notFound);
    const said = rememberAnswer(ctx.session, await ctx.deps.answerApproval(Number(parts[1]), decision, 'console'));
    return redirect(res, `/approvals?said=${said}`);
  }
  return sendText(res, 404, CONSOLE_REFUSALS.notFound);
}
