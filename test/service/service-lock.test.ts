/**
 * One service per `$BATON_HOME` (src/service/lock.ts): a live baton holding the home refuses a
 * second start with its pid; a lock left by a process that is gone is taken over; a release never
 * removes a lock that is not this process's.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireServiceLock, serviceLockPath } from '../../src/service/lock.js';

const LOCK_JS = fileURLToPath(new URL('../../dist/service/lock.js', import.meta.url));
const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function home(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-lock-'));
  dirs.push(dir);
  return dir;
}

describe('the service lock of a home', () => {
  it('refuses a second start while the holder is a live baton, with its pid and the fix', async () => {
    const batonHome = await home();
    const first = await acquireServiceLock({ batonHome, host: 'box', pid: 4242, isLocalBaton: () => true });
    await expect(
      acquireServiceLock({ batonHome, host: 'box', pid: 4343, isLocalBaton: (pid) => pid === 4242 }),
    ).rejects.toMatchObject({
      code: 'service_running',
      message: expect.stringMatching(/already running on this home .*pid 4242.*kill 4242.*BATON_HOME/s),
    });
    // The refused start's release (its undo) leaves the holder's lock alone.
    expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: 4242 });
    await first.release();
    await expect(readFile(serviceLockPath(batonHome))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes over a lock whose process is gone, or that is unreadable, and releases only its own', async () => {
    const batonHome = await home();
    await writeFile(serviceLockPath(batonHome), JSON.stringify({ pid: 999_999, host: 'box', startedAt: 'then' }));
    const taken = await acquireServiceLock({ batonHome, host: 'box', pid: 10, isLocalBaton: () => false });
    expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: 10, host: 'box' });
    // Someone else's lock now (written by hand): this process's release must not remove it.
    await writeFile(serviceLockPath(batonHome), JSON.stringify({ pid: 11, host: 'box', startedAt: 'now' }));
    await taken.release();
    expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: 11 });
    await writeFile(serviceLockPath(batonHome), 'not json');
    const again = await acquireServiceLock({ batonHome, host: 'box', pid: 12, isLocalBaton: () => true });
    expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: 12 });
    await again.release();
  });

  it('lets exactly one of many starts racing over a stale lock take it; the others are refused with its pid', async () => {
    const batonHome = await home();
    for (let round = 0; round < 5; round++) {
      await writeFile(serviceLockPath(batonHome), JSON.stringify({ pid: 999_999, host: 'box', startedAt: 'then' }));
      const racers = Array.from({ length: 16 }, (_, i) => 1000 + round * 100 + i);
      const live = new Set(racers);
      const outcomes = await Promise.allSettled(
        racers.map((pid) => acquireServiceLock({ batonHome, host: 'box', pid, isLocalBaton: (p) => live.has(p) })),
      );
      const won = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [{ pid: racers[i]!, lock: o.value }] : []));
      expect(won).toHaveLength(1);
      const winner = won[0]!;
      expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: winner.pid });
      for (const o of outcomes) {
        if (o.status === 'rejected')
          expect(o.reason).toMatchObject({ code: 'service_running', details: { pid: winner.pid } });
      }
      // Nothing but the lock is left behind: no drafts, no break rights.
      expect((await readdir(batonHome)).sort()).toEqual(['service.lock']);
      await winner.lock.release();
    }
  });

  it('takes over a stale lock whose break right was left by a start that died holding it', async () => {
    const batonHome = await home();
    const stale = JSON.stringify({ pid: 999_999, host: 'box', startedAt: 'then' });
    await writeFile(serviceLockPath(batonHome), stale);
    const digest = createHash('sha256').update(stale).digest('hex').slice(0, 32);
    await writeFile(
      `${serviceLockPath(batonHome)}.break-${digest}`,
      JSON.stringify({ pid: 999_998, host: 'box', startedAt: 'then' }),
    );
    const taken = await acquireServiceLock({ batonHome, host: 'box', pid: 20, isLocalBaton: () => false });
    expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: 20 });
    expect(await readdir(batonHome)).toEqual(['service.lock']);
    await taken.release();
  });

  it('lets exactly one of many processes racing over a stale lock take it (real processes, built dist)', async () => {
    const batonHome = await home();
    const gone = spawn(process.execPath, ['-e', '']);
    await once(gone, 'exit');
    await writeFile(serviceLockPath(batonHome), JSON.stringify({ pid: gone.pid, host: 'box', startedAt: 'then' }));
    const script = `
      import { acquireServiceLock } from ${JSON.stringify(pathToFileURL(LOCK_JS).href)};
      const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
      process.stdin.once('data', async () => {
        const outcome = await acquireServiceLock({ batonHome: ${JSON.stringify(batonHome)}, host: 'box', isLocalBaton: alive }).then(
          () => ({ won: true }),
          (err) => ({ code: err.code, holder: err.details?.pid }),
        );
        process.stdout.write(JSON.stringify({ pid: process.pid, ...outcome }) + '\\n');
      });`;
    const racers = Array.from({ length: 8 }, () =>
      spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    try {
      // Each one stays alive (holding or refused) until all have answered, so the winner's pid is live.
      await Promise.all(racers.map((child) => once(child, 'spawn')));
      const answers = racers.map((child) =>
        once(child.stdout!, 'data').then(
          ([chunk]) => JSON.parse(String(chunk)) as { pid: number; won?: boolean; code?: string; holder?: number },
        ),
      );
      for (const child of racers) child.stdin!.write('go\n');
      const outcomes = await Promise.all(answers);
      const winners = outcomes.filter((o) => o.won);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.pid;
      for (const o of outcomes) if (!o.won) expect(o).toMatchObject({ code: 'service_running', holder: winner });
      expect(JSON.parse(await readFile(serviceLockPath(batonHome), 'utf8'))).toMatchObject({ pid: winner });
    } finally {
      for (const child of racers) child.stdin!.end();
      await Promise.all(racers.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    }
  });
});
