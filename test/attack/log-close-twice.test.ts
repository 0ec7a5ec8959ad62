/**
 * close() promises that the file's last lines are written once it resolves. A second call made
 * while the first was still flushing resolved at once (the first had taken the stream), before
 * those lines were on disk.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { createServiceLogger } from '../../src/core/logger.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-close-twice-'));
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

it('a second close() resolves only once the last lines are on disk, as the first does', async () => {
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
