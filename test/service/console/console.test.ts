/**
 * The web console behind its login, over real HTTP on 127.0.0.1 and a real database: no page or
 * API answers without a session; a used, expired or forged login or cookie is refused; a POST
 * without the session's CSRF token or from another origin changes nothing; untrusted text
 * (a task, a file name, a command's output, an agent's message) is rendered as text; a run with
 * 10,000 stored events opens on its first page.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/core/logger.js';
import { codexTranscript } from '../../../src/harness/vendors/codex-transcript.js';
import { createConsole, type WebConsole } from '../../../src/service/console/console.js';
import { LOGIN_TOKEN_TTL_MS, SESSION_TTL_MS } from '../../../src/service/console/sessions.js';
import { startControlApi, type ControlApi } from '../../../src/service/control-api/server.js';
import { runs } from '../../../src/store/schema.js';
import { openTestDatabase, type TestDatabase } from '../../support/database.js';
import { runRow } from '../../support/rows.js';

const XSS = '<img src=x onerror=alert(1)>';

let dir: string;
let database: TestDatabase;
let api: ControlApi;
let web: WebConsole;
let nowMs = Date.parse('2026-12-04T02:00:00Z');
const redelivered: string[] = [];
const run = runRow({ task: `fix ${XSS} please`, status: 'completed', startedAt: new Date(), endedAt: new Date() });
const bigRun = runRow({ cwd: '/repo/big', status: 'completed' });

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request to the console; `headers.host` defaults to the loopback address it listens on. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: api.port, path, method, headers: { host: `127.0.0.1:${api.port}`, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          // An event stream never ends: its first bytes are enough.
          if (res.headers['content-type']?.startsWith('text/event-stream')) req.destroy();
        });
        const done = (): void => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Spends a fresh login link; resolves with the cookie header to send and the CSRF token of the session. */
async function signIn(): Promise<{ cookie: string; csrf: string }> {
  const login = await send('GET', web.mintLoginPath());
  expect(login.status).toBe(200);
  const setCookie = String(login.headers['set-cookie']);
  const cookie = setCookie.split(';')[0]!;
  const page = await send('GET', '/runs', { cookie });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
  return { cookie, csrf };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-console-'));
  database = await openTestDatabase();
  await database.db.insert(runs).values([run, bigRun]);
  const runDir = join(dir, 'harness', 'runs', run.id);
  await mkdir(runDir, { recursive: true });
  const events = [
    {
      type: 'item.completed',
      item: {
        id: 'i1',
        type: 'command_execution',
        command: `cat '${XSS}'`,
        aggregated_output: `<script>alert(2)</script>\n`,
        exit_code: 0,
        status: 'completed',
      },
    },
    {
      type: 'item.completed',
      item: {
        id: 'i2',
        type: 'file_change',
        changes: [{ path: `/repo/app/${XSS}.txt`, kind: 'add' }],
        status: 'completed',
      },
    },
    { type: 'item.completed', item: { id: 'i3', type: 'agent_message', text: `Done <script>alert(3)</script>` } },
  ];
  await writeFile(join(runDir, 'events.jsonl'), events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  await writeFile(
    join(runDir, `${run.id}.patch`),
    `diff --git a/${XSS}.txt b/${XSS}.txt\n+<script>alert(4)</script>\n`,
  );
  const bigDir = join(dir, 'harness', 'runs', bigRun.id);
  await mkdir(bigDir, { recursive: true });
  const line = (i: number): string =>
    JSON.stringify({
      type: 'item.completed',
      item: {
        id: `c${i}`,
        type: 'command_execution',
        command: `echo ${i}`,
        aggregated_output: `${i}\n`,
        exit_code: 0,
        status: 'completed',
      },
    });
  await writeFile(join(bigDir, 'events.jsonl'), Array.from({ length: 10_000 }, (_, i) => line(i)).join('\n') + '\n');
  web = createConsole({
    db: database.db,
    batonHome: dir,
    nowMs: () => nowMs,
    transcriptOf: (vendor) => (vendor === 'codex' ? codexTranscript : undefined),
    redeliver: async (id) => {
      redelivered.push(id);
      return `Delivery #${id} is queued again.`;
    },
    logger: silentLogger(),
  });
  api = await startControlApi({
    port: 0,
    batonHome: dir,
    host: 'test',
    startedAt: new Date(),
    report: () => Promise.reject(new Error('unused')),
    admin: () => Promise.resolve([]),
    console: web,
    logger: silentLogger(),
  });
});
afterAll(async () => {
  await api?.close();
  await web?.close();
  await database?.dispose();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const PAGES = [
  '/',
  '/runs',
  `/runs/${run.id}`,
  `/runs/${run.id}/patch`,
  `/runs/${run.id}/result.md`,
  '/approvals',
  '/events',
];

describe('web console: who gets in', () => {
  it('answers no page or API without a session, and no forged cookie', async () => {
    for (const path of PAGES) {
      expect((await send('GET', path)).status, path).toBe(401);
      expect((await send('GET', path, { cookie: 'baton_console=forged-value' })).status, path).toBe(401);
    }
    const post = await send(
      'POST',
      `/runs/${run.id}/deliveries/7/redeliver`,
      {
        'content-type': 'application/x-www-form-urlencoded',
        origin: `http://127.0.0.1:${api.port}`,
      },
      'csrf=anything',
    );
    expect(post.status).toBe(401);
    expect(redelivered).toEqual([]);
  });

  it('turns a login link into an HttpOnly SameSite=Strict cookie once; a used or expired link is refused', async () => {
    const path = web.mintLoginPath();
    const first = await send('GET', path);
    expect(first.status).toBe(200);
    expect(String(first.headers['set-cookie'])).toMatch(
      /^baton_console=[\w-]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=\d+$/,
    );
    expect((await send('GET', path)).status).toBe(403);
    const late = web.mintLoginPath();
    nowMs += LOGIN_TOKEN_TTL_MS + 1;
    expect((await send('GET', late)).status).toBe(403);
  });

  it('refuses a session once it expired', async () => {
    const { cookie } = await signIn();
    expect((await send('GET', '/runs', { cookie })).status).toBe(200);
    nowMs += SESSION_TTL_MS + 1;
    expect((await send('GET', '/runs', { cookie })).status).toBe(401);
  });

  it('sends a strict Content-Security-Policy and refuses a foreign Host (DNS rebinding)', async () => {
    const { cookie } = await signIn();
    const page = await send('GET', '/runs', { cookie });
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect((await send('GET', '/runs', { cookie, host: 'evil.example:80' })).status).toBe(421);
  });

  it('refuses a POST without the CSRF token, with a wrong one, or from another origin', async () => {
    const { cookie, csrf } = await signIn();
    const form = { cookie, 'content-type': 'application/x-www-form-urlencoded' };
    const path = `/runs/${run.id}/deliveries/7/redeliver`;
    const own = `http://127.0.0.1:${api.port}`;
    expect((await send('POST', path, { ...form, origin: own }, '')).status).toBe(403);
    expect((await send('POST', path, { ...form, origin: own }, 'csrf=wrong')).status).toBe(403);
    expect((await send('POST', path, { ...form, origin: 'http://127.0.0.1:1' }, `csrf=${csrf}`)).status).toBe(403);
    expect((await send('POST', path, form, `csrf=${csrf}`)).status).toBe(403);
    expect(redelivered).toEqual([]);
    const sent = await send('POST', path, { ...form, origin: own }, `csrf=${csrf}`);
    expect(sent.status).toBe(303);
    expect(redelivered).toEqual(['7']);
    expect(sent.headers.location).toMatch(new RegExp(`^/runs/${run.id}\\?said=[0-9a-f]+$`));
    const after = await send('GET', String(sent.headers.location), { cookie });
    expect(after.body).toContain('Delivery #7 is queued again.');
  });
});

describe('web console: untrusted text', () => {
  it('renders a task, a file name, a command output and an agent message as text', async () => {
    const { cookie } = await signIn();
    const list = await send('GET', '/runs', { cookie });
    expect(list.body).toContain('fix &lt;img src=x onerror=alert(1)&gt; please');
    const page = await send('GET', `/runs/${run.id}`, { cookie });
    expect(page.status).toBe(200);
    for (const body of [list.body, page.body]) {
      expect(body).not.toContain('<img src=x');
      expect(body).not.toMatch(/<script>alert/);
    }
    expect(page.body).toContain('&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(page.body).toContain('&lt;img src=x onerror=alert(1)&gt;.txt');
    expect(page.body).toContain('Done &lt;script&gt;alert(3)&lt;/script&gt;');
    expect(page.body).toContain('+&lt;script&gt;alert(4)&lt;/script&gt;');
    expect(page.body).toContain('exit 0');
    const patch = await send('GET', `/runs/${run.id}/patch`, { cookie });
    expect(patch.headers['content-disposition']).toBe(`attachment; filename="${run.id}.patch"`);
    expect(patch.body).toContain('+<script>alert(4)</script>');
  });

  it('opens a run of 10,000 events on its first page, with the next page a link away', async () => {
    const { cookie } = await signIn();
    const first = await send('GET', `/runs/${bigRun.id}`, { cookie });
    expect(first.body).toContain('events 1–500 / 10000');
    expect(first.body).toContain('<code>$ echo 499</code>');
    expect(first.body).not.toContain('<code>$ echo 500</code>');
    expect(first.body).toContain('href="?events=500"');
    const last = await send('GET', `/runs/${bigRun.id}?events=9500`, { cookie });
    expect(last.body).toContain('<code>$ echo 9999</code>');
    expect(last.body).not.toContain('<code>$ echo 9499</code>');
  });
});
