import { lstat, mkdtemp, readdir, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRotatingLogFile } from '../../src/core/log-file.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'baton-logfile-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

/** Polls until `check` passes (the file is written asynchronously). */
async function eventually(check: () => Promise<void>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      return await check();
    } catch (err) {
      if (i > 200) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

describe('rotating log file', () => {
  it('appends to the newest file, rotates past the size, keeps keepFiles old ones and links current.log', async () => {
    const logs = join(dir, 'logs');
    const first = await openRotatingLogFile({ dir: logs, baseName: 'baton', maxBytes: 100, keepFiles: 2 });
    first.write('a'.repeat(59) + '\n');
    expect(first.current()).toBe(join(logs, 'baton.1.log'));
    expect((await stat(logs)).mode & 0o777).toBe(0o700);
    expect((await stat(join(logs, 'baton.1.log'))).mode & 0o777).toBe(0o600);
    expect(await readlink(join(logs, 'current.log'))).toBe('baton.1.log');
    // 120 bytes: past 100, so the next write goes to baton.2.log.
    first.write('b'.repeat(59) + '\n');
    await eventually(async () => expect(await readlink(join(logs, 'current.log'))).toBe('baton.2.log'));
    first.write('c'.repeat(9) + '\n');
    for (const letter of ['d', 'e', 'f', 'g', 'h', 'i']) {
      const before = first.current();
      first.write(letter.repeat(119) + '\n');
      await eventually(async () => expect(first.current()).not.toBe(before));
      await eventually(async () => expect(await readlink(join(logs, 'current.log'))).toBe(first.current().split('/').pop()));
    }
    first.end();
    // Files 1..8 were written; the one in use (8) and the 2 before it stay.
    await eventually(async () => expect((await readdir(logs)).sort()).toEqual(['baton.6.log', 'baton.7.log', 'baton.8.log', 'current.log']));
    // No line is lost or split; a line written while a rotation reopens may land in the next file.
    const kept = (await Promise.all([6, 7, 8].map((n) => readFile(join(logs, `baton.${n}.log`), 'utf8')))).join('');
    expect(kept).toMatch(/^(g{119}\n)?(h{119}\n)?i{119}\n$/);
    expect((await lstat(join(logs, 'current.log'))).isSymbolicLink()).toBe(true);
  });

  it('continues the highest-numbered file after a restart, counting its size', async () => {
    const logs = join(dir, 'restart');
    const opened = await openRotatingLogFile({ dir: logs, baseName: 'baton', maxBytes: 100, keepFiles: 5 });
    opened.end();
    await writeFile(join(logs, 'baton.4.log'), 'x'.repeat(90) + '\n');
    await writeFile(join(logs, 'other.9.log'), 'not ours\n');
    const again = await openRotatingLogFile({ dir: logs, baseName: 'baton', maxBytes: 100, keepFiles: 5 });
    expect(again.current()).toBe(join(logs, 'baton.4.log'));
    expect(await readlink(join(logs, 'current.log'))).toBe('baton.4.log');
    again.write('y'.repeat(19) + '\n');
    await eventually(async () => expect(await readlink(join(logs, 'current.log'))).toBe('baton.5.log'));
    expect(again.current()).toBe(join(logs, 'baton.5.log'));
    again.write('z\n');
    again.end();
    await eventually(async () => expect(await readFile(join(logs, 'baton.5.log'), 'utf8')).toBe('z\n'));
    expect(await readFile(join(logs, 'baton.4.log'), 'utf8')).toBe('x'.repeat(90) + '\n' + 'y'.repeat(19) + '\n');
    expect(await readFile(join(logs, 'other.9.log'), 'utf8')).toBe('not ours\n');
  });
});
