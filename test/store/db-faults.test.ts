/**
 * The small parts of surviving database faults (issue #18 items 7, 8, 10): which uncaught errors
 * are the driver's, the start-up wait, and the run directory's terminal record.
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatonError } from '../../src/core/errors.js';
import { newRunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import {
  persistTerminal,
  readTerminalRecord,
  writeTerminalRecord,
  type TerminalRecord,
} from '../../src/harness/terminal-write.js';
import { isDriverFault } from '../../src/store/driver-faults.js';
import { openDatabaseWithRetry } from '../../src/store/open-retry.js';
import type { Database } from '../../src/store/database.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-dbfaults-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe('isDriverFault', () => {
  const withStack = (name: string, stack: string): Error => Object.assign(new TypeError(name), { stack });
  it('recognises an error thrown from inside postgres.js (ESM and CommonJS builds)', () => {
    // The stack of the fault reproduced through test/fakes/tcp-proxy.ts.
    const esm =
      "TypeError: Cannot read properties of null (reading 'write')\n    at Immediate.nextWrite (file:///work/main/node_modules/postgres/src/connection.js:255:22)\n    at process.processImmediate (node:internal/timers:483:21)";
    const cjs = 'TypeError: x\n    at nextWrite (/srv/app/node_modules/postgres/cjs/src/connection.js:250:22)';
    expect(isDriverFault(withStack('a', esm))).toBe(true);
    expect(isDriverFault(withStack('b', cjs))).toBe(true);
  });
  it('leaves every other error to end the process', () => {
    expect(
      isDriverFault(
        withStack(
          'c',
          'TypeError: x\n    at handle (file:///opt/baton/dist/dispatch/dispatcher.js:10:5)\n    at file:///x/node_modules/postgres/src/connection.js:1:1',
        ),
      ),
    ).toBe(false);
    expect(
      isDriverFault(withStack('d', 'TypeError: x\n    at f (file:///x/node_modules/postgres-extra/src/a.js:1:1)')),
    ).toBe(false);
    expect(isDriverFault('a string')).toBe(false);
    expect(isDriverFault(undefined)).toBe(false);
  });
});

describe('openDatabaseWithRetry', () => {
  const fakeDatabase = {} as Database;
  const policy = { maxWaitMs: 50, firstDelayMs: 1, maxDelayMs: 4 };
  const unavailable = (): BatonError =>
    new BatonError(
      'database_unavailable',
      'Cannot reach PostgreSQL at h:1/db: connect ECONNREFUSED. Start the server.',
    );

  it('retries database_unavailable with one line per attempt, then opens', async () => {
    const lines: string[] = [];
    let calls = 0;
    const opened = await openDatabaseWithRetry(
      { url: 'postgres://u:secret@h:1/db' },
      {
        say: (line) => lines.push(line),
        nowMs: () => 0,
        policy,
        open: async () => {
          calls += 1;
          if (calls < 3) throw unavailable();
          return fakeDatabase;
        },
      },
    );
    expect(opened).toBe(fakeDatabase);
    expect(lines).toEqual([
      'baton: Cannot reach PostgreSQL at h:1/db: connect ECONNREFUSED; retrying in 0s (attempt 1, giving up after 0s)',
      'baton: Cannot reach PostgreSQL at h:1/db: connect ECONNREFUSED; retrying in 0s (attempt 2, giving up after 0s)',
      'baton: the database answered (attempt 3); starting',
    ]);
  });

  it('gives up after maxWaitMs with the original error', async () => {
    let now = 0;
    const err = unavailable();
    await expect(
      openDatabaseWithRetry(
        { url: 'postgres://h/db' },
        { say: () => {}, nowMs: () => (now += 30), policy, open: () => Promise.reject(err) },
      ),
    ).rejects.toBe(err);
  });

  it('makes its last attempt when maxWaitMs has passed, not a whole wait before', async () => {
    // Each attempt takes 1.5 s to fail (a slow connect); the service's own policy. Before, it gave
    // up at 55.5 s, after an attempt at 54 s, of the 60 s its lines promised: the next 15 s wait
    // would have passed 60 s, so it gave up instead of waiting the 4.5 s left.
    let now = 0;
    const attemptsAtMs: number[] = [];
    const lines: string[] = [];
    const err = unavailable();
    await expect(
      openDatabaseWithRetry(
        { url: 'postgres://h/db' },
        {
          say: (line) => lines.push(line),
          nowMs: () => now,
          policy: { maxWaitMs: 60_000, firstDelayMs: 1_000, maxDelayMs: 15_000 },
          sleep: async (ms) => void (now += ms),
          open: () => {
            attemptsAtMs.push(now);
            now += 1_500;
            return Promise.reject(err);
          },
        },
      ),
    ).rejects.toBe(err);
    expect(attemptsAtMs).toEqual([0, 2_500, 6_000, 11_500, 21_000, 37_500, 54_000, 60_000]);
    expect(lines.at(-1)).toBe(
      'baton: Cannot reach PostgreSQL at h:1/db: connect ECONNREFUSED; retrying in 5s (attempt 7, giving up after 60s)',
    );
  });

  it('does not wait for what waiting cannot fix', async () => {
    const migration = new BatonError('migration_failed', 'Database migrations failed.');
    let calls = 0;
    const open = (): Promise<Database> => {
      calls += 1;
      return Promise.reject(migration);
    };
    await expect(
      openDatabaseWithRetry({ url: 'postgres://h/db' }, { say: () => {}, nowMs: () => 0, policy, open }),
    ).rejects.toBe(migration);
    const locked = new BatonError('database_unavailable', 'The embedded database is in use by another baton process.');
    await expect(
      openDatabaseWithRetry(
        { dataDir: '/x' },
        { say: () => {}, nowMs: () => 0, policy, open: () => Promise.reject(locked) },
      ),
    ).rejects.toBe(locked);
    expect(calls).toBe(1);
  });
});

describe('terminal record', () => {
  const runId = newRunId();
  const record: TerminalRecord = {
    runId,
    terminal: {
      status: 'completed',
      reason: null,
      finalMessage: 'done',
      endedAt: new Date('2026-11-30T12:00:00.000Z'),
    },
    outcome: {
      runId,
      kind: 'outcome',
      target: { platform: 'telegram', chatId: '1' },
      body: `[run ${runId}] completed`,
    },
  };

  it('round-trips through a 0600 terminal.json', async () => {
    await writeTerminalRecord(dir, record);
    expect((await stat(join(dir, 'terminal.json'))).mode & 0o777).toBe(0o600);
    expect(await readTerminalRecord(dir, runId, silentLogger())).toEqual(record);
  });

  it('ignores a missing, malformed or foreign record', async () => {
    const other = await mkdtemp(join(dir, 'x-'));
    expect(await readTerminalRecord(other, runId, silentLogger())).toBeUndefined();
    await writeFile(join(other, 'terminal.json'), '{"runId":');
    expect(await readTerminalRecord(other, runId, silentLogger())).toBeUndefined();
    await writeTerminalRecord(other, record);
    expect(await readTerminalRecord(other, newRunId(), silentLogger())).toBeUndefined();
  });

  it('retries the write until it lands, and an attempt that never settles does not block it', async () => {
    let calls = 0;
    const store = {
      finishRun: () => {
        calls += 1;
        if (calls === 1) return Promise.reject(new Error('write CONNECTION_CLOSED'));
        if (calls === 2) return new Promise<never>(() => {}); // a query postgres.js lost
        return Promise.resolve(null);
      },
    };
    const policy = { firstDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 20 };
    const row = await persistTerminal(
      { store: { runs: store }, logger: silentLogger(), now: () => new Date(), policy },
      record,
      new AbortController().signal,
    );
    expect(row).toBeNull();
    expect(calls).toBe(3);
  });

  it('makes the first attempt even when stopping, and stops retrying then', async () => {
    const stopping = new AbortController();
    stopping.abort(new Error('stopping'));
    let calls = 0;
    const store = {
      finishRun: () => {
        calls += 1;
        return Promise.reject(new Error('down'));
      },
    };
    await expect(
      persistTerminal(
        {
          store: { runs: store },
          logger: silentLogger(),
          now: () => new Date(),
          policy: { firstDelayMs: 1, maxDelayMs: 1, attemptTimeoutMs: 20 },
        },
        record,
        stopping.signal,
      ),
    ).rejects.toThrow('stopping');
    expect(calls).toBe(1);
  });
});
