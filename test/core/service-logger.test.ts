/**
 * The service's log file opens after `baton ready` (issue #15, the start): pino-roll, which loads
 * all of date-fns, is not on the start path, and no line logged before the file opened is lost
 * from it or put out of order.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
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

/** Waits until the file's writes are on disk (pino-roll writes asynchronously), 30 s at most. */
async function settle(logsDir: string, lastMessage: string): Promise<string[]> {
  const end = Date.now() + 30_000;
  for (;;) {
    const messages = await fileMessages(logsDir).catch((): string[] => []);
    if (messages.includes(lastMessage)) return messages;
    if (Date.now() > end) throw new Error(`"${lastMessage}" never reached the log file`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Whether a line containing every one of `parts` went to stdout. */
function saidOnStdout(...parts: string[]): boolean {
  return vi
    .mocked(process.stdout.write)
    .mock.calls.some((call) => parts.every((part) => String(call[0]).includes(part)));
}

/** Waits (30 s at most) until {@link saidOnStdout}. */
async function waitForStdout(...parts: string[]): Promise<void> {
  const end = Date.now() + 30_000;
  while (!saidOnStdout(...parts)) {
    if (Date.now() > end) throw new Error(`stdout never said ${parts.join(' … ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the service log file', () => {
  it('loads pino-roll only when the file opens, and keeps the lines logged before, in order', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    const loaded = (): boolean =>
      Object.keys(createRequire(import.meta.url).cache).some((path) => path.includes('/node_modules/pino-roll/'));
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

  it('goes on with stdout only when a write to the open file fails (a full disk), instead of ending the process', async () => {
    const logsDir = join(dir, 'logs');
    await mkdir(logsDir, { recursive: true });
    // /dev/full opens, and every write to it fails with ENOSPC.
    await symlink('/dev/full', join(logsDir, 'baton.1.log'));
    const service = await createServiceLogger('info', logsDir);
    service.logger.info('kept for the file');
    await service.openFile();
    await waitForStdout('writing the log file failed', 'ENOSPC');
    service.logger.info('still logging');
    expect(saidOnStdout('still logging')).toBe(true);
    await service.close();
  });

  it('does not end the process when current.log is a plain file and the log file cannot be opened', async () => {
    const logsDir = join(dir, 'logs');
    await mkdir(join(logsDir, 'baton.1.log'), { recursive: true });
    await writeFile(join(logsDir, 'current.log'), 'not a link\n');
    const service = await createServiceLogger('info', logsDir);
    await expect(service.openFile()).rejects.toThrow();
    expect(saidOnStdout('could not open the log file')).toBe(true);
    await service.close();
  });

  it('logs to the file, and warns once, when current.log is a plain file it may not replace', async () => {
    const logsDir = join(dir, 'logs');
    await mkdir(logsDir, { recursive: true });
    await writeFile(join(logsDir, 'current.log'), 'not a link\n');
    const service = await createServiceLogger('info', logsDir);
    await service.openFile();
    expect(saidOnStdout('current.log is not a symlink')).toBe(true);
    service.logger.info('to the file');
    await service.close();
    expect(await readFile(join(logsDir, 'baton.1.log'), 'utf8')).toContain('"msg":"to the file"');
    expect(await readFile(join(logsDir, 'current.log'), 'utf8')).toBe('not a link\n');
  });

  it('has every line on disk once close() resolved', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    const lines = 2_000;
    for (let i = 0; i < lines; i++) service.logger.info(`line ${i} ${'y'.repeat(200)}`);
    await service.close();
    const messages = await fileMessages(logsDir);
    expect(messages).toHaveLength(lines);
    expect(messages[lines - 1]).toMatch(/^line 1999 /);
    service.logger.info('after close'); // to stdout only; never to the ended file
    expect(saidOnStdout('after close')).toBe(true);
  });

  it('resolves a second close() only once the last lines are on disk, as the first does', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    await service.openFile();
    const lines = 5_000;
    for (let i = 0; i < lines; i++) service.logger.info(`line ${i} ${'y'.repeat(200)}`);
    const first = service.close();
    await service.close();
    // Read at once: no turn of the event loop between the second close() resolving and this.
    const text = readFileSync(join(logsDir, 'current.log'), 'utf8');
    expect(text).toContain(`"msg":"line ${lines - 1} `);
    await first;
    expect(await readFile(join(logsDir, 'current.log'), 'utf8')).toBe(text);
  });

  it('keeps at most the pending limit in memory and says in the file how many lines went to stdout only', async () => {
    const logsDir = join(dir, 'logs');
    const service = await createServiceLogger('info', logsDir);
    const filler = 'x'.repeat(10_000);
    const lines = Math.ceil(PENDING_LOG_LIMIT_BYTES / filler.length) + 5;
    for (let i = 0; i < lines; i++) service.logger.info(`${i} ${filler}`);
    service.logger.info('small, after the first dropped line'); // not kept: no gaps in the file
    await service.openFile();
    service.logger.info('live');
    const messages = await settle(logsDir, 'live');
    const kept = messages.filter((m) => m.endsWith(filler));
    expect(kept.length).toBeLessThan(lines);
    expect(kept.map((m) => Number(m.split(' ')[0]))).toEqual([...Array(kept.length).keys()]);
    expect(messages).not.toContain('small, after the first dropped line');
    expect(messages).toContain(
      `${lines + 1 - kept.length} start-up log lines are on stdout only: more than ${PENDING_LOG_LIMIT_BYTES} bytes were logged before this file opened`,
    );
    await service.close();
  });
});
