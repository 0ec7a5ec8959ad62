/**
 * No log line holds a task's text (issue #18 item 6): drizzle-orm wraps a failed query as
 * `DrizzleQueryError`, whose message, stack and `params` carry every bound parameter. A real
 * failed query (a NUL, which PostgreSQL refuses in text) against the test database, logged
 * through the service's logger configuration.
 */
import { Writable } from 'node:stream';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { createLogger, serializeError } from '../../src/core/logger.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const database = useTestDatabase();

describe(`logging a failed query (${testEngine})`, () => {
  it('keeps the error and its cause but withholds the parameters', async () => {
    const task = 'the owner’s secret task text 5f1e';
    const err = await database.db.execute(sql`select ${`${task}\u0000`}::text as t`).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(
      JSON.stringify({
        message: (err as Error).message,
        stack: (err as Error).stack,
        params: (err as { params?: unknown }).params,
      }),
    ).toContain(task);

    const lines: string[] = [];
    const logger = createLogger({
      level: 'info',
      destination: new Writable({
        write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()),
      }) as never,
    });
    logger.warn({ err }, 'query failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('secret task text');
    expect(lines[0]).toContain('params: [withheld]');
    expect(lines[0]).toContain('select $1::text');
  });

  it('leaves errors without parameters as pino writes them', () => {
    const plain = new Error('plain failure', { cause: new Error('inner') });
    expect(serializeError(plain)).toMatchObject({ type: 'Error', message: expect.stringContaining('plain failure') });
    expect(serializeError('not an error')).toBe('not an error');
  });
});
