/**
 * `POST /approvals/request` on the health port (issue #14): the run's token (header) is checked
 * before any of the body is read, and the body is capped to what one permission request needs.
 * A real HTTP server on 127.0.0.1 with an approval endpoint that knows one run and one token.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { APPROVAL_BODY_MAX_BYTES } from '../../src/service/control-api/approvals.js';
import { startControlApi, type ControlApi } from '../../src/service/control-api/server.js';
import type { RunRow } from '../../src/store/schema.js';

const RUN_ID = 'hr_0123456789ab';
const TOKEN = 'the-run-token';

let dir: string;
let health: ControlApi;
const asked: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-health-approvals-'));
  health = await startControlApi({
    port: 0,
    batonHome: dir,
    host: 'test',
    startedAt: new Date(),
    report: () => Promise.reject(new Error('unused')),
    admin: () => Promise.resolve([]),
    approvals: {
      authorize: async (runId, token) => (runId === RUN_ID && token === TOKEN ? ({ id: RUN_ID } as RunRow) : undefined),
      request: async (_run, req) => {
        asked.push(req.tool);
        return { state: 'decided', decision: 'allow', behavior: 'allow', message: '' };
      },
    },
    logger: silentLogger(),
  });
});
afterAll(async () => {
  await health?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Sends the headers and `first` of the body; `end` says whether the body is ever finished. */
function post(headers: Record<string, string>, first: string, end: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: health.port,
        path: '/approvals/request',
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, body });
          req.destroy();
        });
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.write(first);
    if (end) req.end();
  });
}

const body = (input: Record<string, unknown>): string =>
  JSON.stringify({ runId: RUN_ID, requestId: 'toolu_1', tool: 'Bash', input });

describe('POST /approvals/request', () => {
  it('answers a wrong token with 401 without waiting for the body', async () => {
    // The body is never finished: only a check made before reading it can answer.
    const answer = await post({ authorization: 'Bearer wrong', 'x-baton-run-id': RUN_ID }, '{"runId": "', false);
    expect(answer.status).toBe(401);
  });
  it('answers a request without the run id header with 401 without waiting for the body', async () => {
    const answer = await post({ authorization: `Bearer ${TOKEN}` }, '{"runId": "', false);
    expect(answer.status).toBe(401);
  });
  it('takes a request of the right run with its token', async () => {
    const answer = await post(
      { authorization: `Bearer ${TOKEN}`, 'x-baton-run-id': RUN_ID },
      body({ command: 'ls' }),
      true,
    );
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ state: 'decided', behavior: 'allow' });
  });
  it('refuses a body over the cap with 413, also from the right run', async () => {
    expect(APPROVAL_BODY_MAX_BYTES).toBeLessThanOrEqual(2 * 1024 * 1024);
    const before = asked.length;
    const answer = await post(
      { authorization: `Bearer ${TOKEN}`, 'x-baton-run-id': RUN_ID },
      body({ content: 'x'.repeat(APPROVAL_BODY_MAX_BYTES) }),
      true,
    );
    expect(answer.status).toBe(413);
    expect(asked.length).toBe(before);
  });
});
