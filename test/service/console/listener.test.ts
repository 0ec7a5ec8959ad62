/**
 * `[console] listen`: the console on one more address, behind the same login; the address must
 * be the one the browser names, and the control API stays on loopback only.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configFileSchema } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/core/logger.js';
import { createConsole, type WebConsole } from '../../../src/service/console/console.js';
import { startConsoleListener, type ConsoleListener } from '../../../src/service/console/listener.js';
import { openTestDatabase, type TestDatabase } from '../../support/database.js';

const HOST = '127.0.0.2';
let database: TestDatabase;
let web: WebConsole;
let listener: ConsoleListener;
let listen: string;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; cookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port: listener.port, path, headers: { host: listen, ...headers } }, (res) => {
      res.resume();
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ...(res.headers['set-cookie'] ? { cookie: res.headers['set-cookie'][0]!.split(';')[0]! } : {}),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  database = await openTestDatabase();
  listen = `${HOST}:${await freePort()}`;
  web = createConsole({
    db: database.db,
    batonHome: '/nonexistent',
    nowMs: () => Date.now(),
    transcriptOf: () => undefined,
    redeliver: async () => 'unused',
    extraHosts: [listen],
    logger: silentLogger(),
  });
  listener = await startConsoleListener(listen, web);
});
afterAll(async () => {
  await listener?.close();
  await web?.close();
  await database?.dispose();
});

describe('[console] listen', () => {
  it('serves the console there behind the same login, under its own name only', async () => {
    expect((await get('/runs')).status).toBe(401);
    const login = await get(web.mintLoginPath());
    expect(login.status).toBe(200);
    expect((await get('/runs', { cookie: login.cookie! })).status).toBe(200);
    expect((await get('/runs', { cookie: login.cookie!, host: `evil.example:${listener.port}` })).status).toBe(421);
    // The control API's own paths are not there: only console pages, which want a session.
    expect((await get('/health/ready')).status).toBe(401);
  });

  it('refuses a wildcard address in the config', () => {
    const parse = (value: string) => configFileSchema.safeParse({ console: { listen: value } }).success;
    expect(parse('192.168.1.5:8443')).toBe(true);
    expect(parse('0.0.0.0:8443')).toBe(false);
    expect(parse('[::]:8443')).toBe(false);
    expect(parse('no-port')).toBe(false);
  });
});
