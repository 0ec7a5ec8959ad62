/**
 * The per-run approval server never sends its run's token to a port another user listens on
 * (attack pass: after the service died, another local user who bound the port recorded in
 * `service.json` received the token and could answer "allow" for the run). Runs the built server
 * (`dist/harness/approval-server.js`) as claude would, through the MCP SDK's stdio client.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { APPROVAL_TOOL_NAME } from '../../src/harness/approval-names.js';

const SCRIPT = fileURLToPath(new URL('../../dist/harness/approval-server.js', import.meta.url));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTP listener run as user `nobody` that prints a line for each request's authorization header. */
async function foreignListener(): Promise<{ port: number; child: ChildProcess; requests: string[] }> {
  const code =
    "const s=require('http').createServer((q,r)=>{console.log('REQUEST '+(q.headers.authorization||''));r.end('{}')});s.listen(0,'127.0.0.1',()=>console.log('PORT '+s.address().port))";
  const child = spawn('runuser', ['-u', 'nobody', '--', process.execPath, '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  cleanups.push(() => void child.kill());
  const requests: string[] = [];
  const port = await new Promise<number>((resolve) => {
    let buffer = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
        const line = buffer.slice(0, i);
        buffer = buffer.slice(i + 1);
        if (line.startsWith('PORT ')) resolve(Number(line.slice(5)));
        if (line.startsWith('REQUEST ')) requests.push(line.slice(8));
      }
    });
  });
  return { port, child, requests };
}

describe('approval server', () => {
  it("does not send the run's token to a listener of another user", async () => {
    if (process.platform !== 'linux' || process.getuid?.() !== 0) return; // needs a second user
    execFileSync('id', ['nobody']);
    const foreign = await foreignListener();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [SCRIPT],
      env: {
        PATH: process.env.PATH ?? '',
        BATON_APPROVAL_URL: `http://127.0.0.1:${foreign.port}`,
        BATON_APPROVAL_TOKEN: 'run-token-secret',
        BATON_APPROVAL_RUN_ID: 'hr_foreign',
      },
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    void client
      .callTool(
        { name: APPROVAL_TOOL_NAME, arguments: { tool_name: 'Bash', input: { command: 'touch x' } } },
        undefined,
        { timeout: 600_000 },
      )
      .catch(() => undefined);
    // Either the server refuses the port (and says so on stderr) or the listener gets the request.
    for (
      let waited = 0;
      waited < 60_000 && foreign.requests.length === 0 && !stderr.includes('not sending');
      waited += 100
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(foreign.requests).toEqual([]);
    expect(stderr).toContain(`not sending the run's token to 127.0.0.1:${foreign.port}`);
  });
});
