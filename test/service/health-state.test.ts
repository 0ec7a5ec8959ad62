/**
 * `$BATON_HOME/service.json` belongs to the health server that wrote it: closing a server removes
 * the file only while it is still that server's, even when a later one has the same pid.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { startControlApi } from '../../src/service/control-api/server.js';
import { readServiceState } from '../../src/service/control-api/service-state.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const start = (batonHome: string) =>
  startControlApi({
    port: 0,
    batonHome,
    host: 'test',
    startedAt: new Date(),
    report: () => Promise.reject(new Error('unused')),
    admin: () => Promise.resolve([]),
    logger: silentLogger(),
  });

describe('service.json on close', () => {
  it('is removed by the server that wrote it, and left alone by one it was taken from', async () => {
    const batonHome = await mkdtemp(join(tmpdir(), 'baton-health-state-'));
    dirs.push(batonHome);
    const first = await start(batonHome);
    const second = await start(batonHome);
    expect(await readServiceState(batonHome)).toMatchObject({ pid: process.pid, port: second.port });
    await first.close();
    expect(await readServiceState(batonHome)).toMatchObject({ port: second.port });
    await second.close();
    expect(await readServiceState(batonHome)).toBeUndefined();
  });
});
