/**
 * The service's log file opens after `baton ready` (issue #15, the start): pino-roll, which loads
 * all of date-fns, is not on the start path, and no line logged before the file opened is lost
 * from it or put out of order.
 */
import { closeSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createServiceLogger, PENDING_LOG_LIMIT_BYTES } from '../../src/core/logger.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-logs-'));
  // Lines also go to stdout: kept out of the test output, and readable by the tests.
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** The messages in the live log file, in order. */
async function fileMessages(logsDir: string): Promise<string[]> {
  const text = await readFile(join(logsDir, 'current.log'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
}

/** Waits until the file's writes are on disk: pino-roll writes asynchronously. */
async function settle(logsDir: string, lastMessage: string): Promise<string[]> {
  for (let i = 0; i < 200; i++) {
    const messages = await fileMessages(logsDir).catch((): string[] => []);
    if (messages.includes(lastMessage)) return messages;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`"${lastMessage}" never reached the log file`);
}

describe('the service log file', () => {
  it('loads pino-roll only when the file opens, and keeps the lines logged before, in order', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    const loaded = (): boolean => Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/pino-roll/'));
    service.logger.info('first');
    service.logger.info('second');
    expect(loaded()).toBe(false);
    expect(await readdir(logsDir)).toEqual([]);

    await service.openFile();
    expect(loaded()).toBe(true);
    service.logger.info('third');
    expect(await settle(logsDir, 'third')).toEqual(['first', 'second', 'third']);
    await service.close();
  });

  it('writes the kept lines when the service stops before the file was opened', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    service.logger.error('start-up failed');
    await service.close();
    expect(await settle(logsDir, 'start-up failed')).toEqual(['start-up failed']);
  });

  it('says so on stdout and keeps nothing more when the file cannot be opened', async () => {
    const logsDir = join(dir, 'logs');
    // pino-roll's first file is baton.1.log; a directory there makes its open fail (EISDIR).
    await mkdir(join(logsDir, 'baton.1.log'), { recursive: true });
    const stdout = vi.mocked(process.stdout.write);
    const service = await createServiceLogger('info', logsDir);
    service.logger.info('before');
    await expect(service.openFile()).rejects.toThrow();
    const said = stdout.mock.calls.map((call) => String(call[0]));
    expect(said.some((line) => line.includes('could not open the log file') && line.includes(logsDir))).toBe(true);
    service.logger.info('after');
    expect(said.length + 1).toBe(stdout.mock.calls.length);
    await service.close(); // does not throw
  });

  it('goes on with stdout only when a write to the open file fails, instead of ending the process', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    await service.openFile();
    service.logger.info('written');
    await settle(logsDir, 'written');
    // The file's descriptor closed under it: its next write fails with EBADF, as a full disk's
    // would with ENOSPC. Logged at once, so no other open can take the number first.
    const fd = readdirSync('/proc/self/fd').find((n) => {
      try {
        return readlinkSync(`/proc/self/fd/${n}`) === join(logsDir, 'baton.1.log');
      } catch {
        return false;
      }
    });
    expect(fd).toBeDefined();
    closeSync(Number(fd));
    service.logger.info('not written');
    const stdout = vi.mocked(process.stdout.write);
    for (let i = 0; i < 200 && !stdout.mock.calls.some((call) => String(call[0]).includes('writing the log file failed')); i++) await new Promise((r) => setTimeout(r, 10));
    expect(stdout.mock.calls.some((call) => String(call[0]).includes('writing the log file failed') && String(call[0]).includes('EBADF'))).toBe(true);
    service.logger.info('still logging');
    expect(stdout.mock.calls.some((call) => String(call[0]).includes('still logging'))).toBe(true);
    await service.close();
  });

  it('keeps at most the pending limit in memory and says in the file how many lines went to stdout only', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    const filler = 'x'.repeat(10_000);
    const lines = Math.ceil(PENDING_LOG_LIMIT_BYTES / filler.length) + 5;
    for (let i = 0; i < lines; i++) service.logger.info(`${i} ${filler}`);
    await service.openFile();
    service.logger.info('live');
    const messages = await settle(logsDir, 'live');
    const kept = messages.filter((m) => m.endsWith(filler));
    expect(kept.length).toBeLessThan(lines);
    expect(kept.map((m) => Number(m.split(' ')[0]))).toEqual([...Array(kept.length).keys()]);
    expect(messages).toContain(`${lines - kept.length} start-up log lines are on stdout only: more than ${PENDING_LOG_LIMIT_BYTES} bytes were logged before this file opened`);
    await service.close();
  });
});
