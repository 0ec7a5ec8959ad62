/**
 * The approval server sends its run's token only to a 127.0.0.1 listener owned by its own user
 * (attack pass: after the service died, another local user who bound its old port received the
 * token and could answer "allow").
 */
import { createServer, type Server } from 'node:http';
import { execFileSync, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { listenerOwner, parseListenerUid } from '../../src/harness/listener-owner.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

const SAMPLE = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4614 1 0 100 0 0 10 0',
  '   1: 0100007F:1111 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1001        0 7592 1 0 100 0 0 10 0',
  '   2: 0100007F:2222 0100007F:9999 01 00000000:00000000 00:00000000 00000000  1002        0 7593 1 0 100 0 0 10 0',
].join('\n');

describe('listener owner', () => {
  it('reads the uid of the 127.0.0.1 listener on a port from /proc/net/tcp text', () => {
    expect(parseListenerUid(SAMPLE, 0x18eb)).toBe(0);
    expect(parseListenerUid(SAMPLE, 0x1111)).toBe(1001);
    // An established connection on that port is not a listener.
    expect(parseListenerUid(SAMPLE, 0x2222)).toBeUndefined();
    expect(parseListenerUid(SAMPLE, 0x3333)).toBeUndefined();
  });

  it('finds this process as the owner of its own listener, and nobody on a closed port', async () => {
    if (process.platform !== 'linux') return;
    const server = createServer();
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    expect(await listenerOwner(port)).toEqual({ kind: 'found', uid: process.getuid!() });
    await new Promise((resolve) => server.close(resolve));
    servers.pop();
    expect(await listenerOwner(port)).toEqual({ kind: 'none' });
  });

  it("sees another user's listener as theirs", async () => {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return;
    const uid = Number(execFileSync('id', ['-u', 'nobody']).toString());
    const child = spawn(
      'runuser',
      [
        '-u',
        'nobody',
        '--',
        process.execPath,
        '-e',
        "const s=require('http').createServer();s.listen(0,'127.0.0.1',()=>console.log(s.address().port))",
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const port = await new Promise<number>((resolve) =>
        child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
      );
      expect(await listenerOwner(port)).toEqual({ kind: 'found', uid });
    } finally {
      child.kill();
    }
  });
});
