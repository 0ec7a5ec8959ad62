/**
 * `POST /approvals/request` of the control API: the per-run permission-prompt server asks here
 * whether a tool call may run, and waits (long poll) for the owner's decision.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../core/logger.js';
import type { ApprovalAnswer, ApprovalRequest } from '../../harness/approvals.js';
import type { RunRow } from '../../store/schema.js';

/**
 * The approvals side of the control API, for the per-run permission-prompt server: `authorize`
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
export function handleApproval(
  req: IncomingMessage,
  res: ServerResponse,
  endpoint: ApprovalEndpoint,
  logger: Logger,
): void {
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
