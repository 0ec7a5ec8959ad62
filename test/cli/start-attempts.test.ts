/**
 * `baton start`'s start-up attempts (src/cli/start-attempts.ts) and the connection-loss test
 * they rely on (src/store/connection-loss.ts): a lost connection starts again, at most three
 * attempts; a statement's own error is not retried.
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { START_ATTEMPTS, StartGaveUpError, startWithRetries } from '../../src/cli/start-attempts.js';
import { isConnectionLoss } from '../../src/store/connection-loss.js';

/** An error as postgres.js makes it, wrapped as drizzle's DrizzleQueryError wraps it. */
function wrapped(code: string): Error {
  const cause = Object.assign(new Error(`write ${code} 127.0.0.1:5432`), { code });
  return new Error('Failed query: select 1\nparams: secret task text', { cause });
}

describe('isConnectionLoss', () => {
  it('knows the driver, socket and session-ending codes, also inside a cause', () => {
    for (const code of [
      'CONNECTION_CLOSED',
      'CONNECTION_ENDED',
      'CONNECTION_DESTROYED',
      'CONNECT_TIMEOUT',
      'ECONNRESET',
      'ECONNREFUSED',
      'EPIPE',
      '57P01',
      '57P05',
      '08006',
      '08P01',
    ]) {
      expect(isConnectionLoss(wrapped(code)), code).toBe(true);
    }
  });
  it('does not take a statement error or a plain error for one', () => {
    for (const code of ['23505', '42P01', '40001', '57014', 'ERR_INVALID_ARG_TYPE'])
      expect(isConnectionLoss(wrapped(code)), code).toBe(false);
    expect(isConnectionLoss(new Error('boom'))).toBe(false);
    expect(isConnectionLoss(undefined)).toBe(false);
    expect(isConnectionLoss('CONNECTION_CLOSED')).toBe(false);
  });
});

describe('startWithRetries', () => {
  const deps = (said: string[]) => ({
    say: (line: string) => void said.push(line),
    sleep: async () => undefined,
    events: new EventEmitter() as unknown as NodeJS.Process,
  });

  it('starts again after a lost connection and says so, without the statement parameters', async () => {
    const said: string[] = [];
    let calls = 0;
    const value = await startWithRetries(async () => {
      calls += 1;
      if (calls === 1) throw wrapped('CONNECTION_CLOSED');
      return 'service';
    }, deps(said));
    expect(value).toBe('service');
    expect(calls).toBe(2);
    expect(said).toEqual([
      `baton: start-up lost its database connection (CONNECTION_CLOSED); starting again (attempt 2 of ${START_ATTEMPTS})`,
    ]);
  });

  it('gives up after the last attempt, with the last error as the cause', async () => {
    let calls = 0;
    const last = wrapped('57P01');
    const failing = startWithRetries(async () => {
      calls += 1;
      throw calls === START_ATTEMPTS ? last : wrapped('ECONNRESET');
    }, deps([]));
    await expect(failing).rejects.toBeInstanceOf(StartGaveUpError);
    await expect(failing).rejects.toMatchObject({ attempts: START_ATTEMPTS, cause: last });
    expect(calls).toBe(START_ATTEMPTS);
  });

  it('does not retry an error that is not a lost connection', async () => {
    let calls = 0;
    const wrong = wrapped('42P01');
    await expect(
      startWithRetries(async () => {
        calls += 1;
        throw wrong;
      }, deps([])),
    ).rejects.toBe(wrong);
    expect(calls).toBe(1);
  });

  it('starts again when an attempt stalls (beforeExit with nothing pending)', async () => {
    const said: string[] = [];
    const events = new EventEmitter();
    let calls = 0;
    const value = await startWithRetries(
      () => {
        calls += 1;
        if (calls === 1) {
          setImmediate(() => events.emit('beforeExit'));
          return new Promise<string>(() => undefined);
        }
        return Promise.resolve('service');
      },
      {
        say: (line) => void said.push(line),
        sleep: async () => undefined,
        events: events as unknown as NodeJS.Process,
      },
    );
    expect(value).toBe('service');
    expect(said[0]).toMatch(/stalled on a database connection the server closed; starting again \(attempt 2 of 3\)/);
    expect(events.listenerCount('beforeExit')).toBe(0);
  });
});
