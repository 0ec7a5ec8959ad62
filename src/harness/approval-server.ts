/**
 * The per-run permission-prompt server: a stdio MCP server, spawned by claude through
 * the run's 0600 `mcp.json`, serving one tool, `approve`, which claude calls (as
 * `--permission-prompt-tool=mcp__baton__approve`) before each tool call its permission mode
 * would ask about. It hands each request to the running baton service and waits for the
 * owner's decision; see the claude vendor module for the measured protocol.
 *
 * It reaches the service at `POST /approvals/request` on the service's 127.0.0.1 HTTP port, with
 * the run's own token (`BATON_APPROVAL_TOKEN`) and id (header `X-Baton-Run-Id`, so the service
 * checks the token before it reads the body), which the service accepts only for this run. The
 * service answers within about 20 s (`pending` or the decision); a pending answer, a refused
 * connection or a 5xx (the service restarting) is asked again, with the port re-read from
 * `service.json` (`BATON_SERVICE_STATE`) after a failure. The token goes only to a listener owned by
 * this user (src/harness/listener-owner.ts); any other is treated as the service being away. The
 * server exits with claude.
 *
 * Environment: `BATON_APPROVAL_RUN_ID`, `BATON_APPROVAL_TOKEN`, `BATON_APPROVAL_URL`
 * (`http://127.0.0.1:PORT`), `BATON_SERVICE_STATE` (path of `service.json`). This file is the
 * entry point of its own process (claude spawns it with `node`, never the service imports it),
 * so it reads its environment itself, as main does; biome.json exempts it from noProcessEnv.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { APPROVAL_SERVER_NAME, APPROVAL_TOOL_NAME } from './approval-names.js';
import { listenerOwner } from './listener-owner.js';

/** Wait between asks after a failure to reach the service, in ms. */
const RETRY_MS = 1_000;

interface Decision {
  behavior: 'allow' | 'deny';
  message: string;
}

async function currentUrl(fallback: string): Promise<string> {
  const statePath = process.env['BATON_SERVICE_STATE'];
  if (!statePath) return fallback;
  try {
    const state = JSON.parse(await readFile(statePath, 'utf8')) as { port?: unknown };
    return typeof state.port === 'number' ? `http://127.0.0.1:${state.port}` : fallback;
  } catch {
    return fallback;
  }
}

/**
 * Why the token must not go to `url` now, or undefined when it may: only a 127.0.0.1 listener of
 * this user may receive it (after the service died another local user could bind its port). Where
 * `/proc/net/tcp` cannot be read (not Linux) the check cannot be made and the port is trusted.
 */
async function refusal(url: string): Promise<string | undefined> {
  const port = Number(new URL(url).port);
  if (!Number.isInteger(port) || port <= 0) return 'no port is recorded';
  const owner = await listenerOwner(port);
  if (owner.kind === 'none') return 'nothing listens there';
  if (owner.kind === 'found' && owner.uid !== process.getuid?.())
    return `it is held by uid ${owner.uid}, not this user`;
  return undefined;
}

/**
 * Asks the service until it decides. A 401/404 (the run is unknown to it) and a 413 (the input is
 * over the service's 1 MiB cap) are denials.
 */
async function decide(request: { requestId: string; tool: string; input: Record<string, unknown> }): Promise<Decision> {
  const runId = process.env['BATON_APPROVAL_RUN_ID'] ?? '';
  const token = process.env['BATON_APPROVAL_TOKEN'] ?? '';
  let url = process.env['BATON_APPROVAL_URL'] ?? '';
  let said = '';
  for (;;) {
    try {
      const refused = url ? await refusal(url) : 'no service address is known';
      if (refused) {
        const line = `baton approval server: not sending the run's token to ${url.replace(/^http:\/\//, '') || 'the service'}: ${refused}; waiting for the service\n`;
        if (line !== said) process.stderr.write(line);
        said = line;
        throw new Error(refused);
      }
      const response = await fetch(`${url}/approvals/request`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'x-baton-run-id': runId, 'content-type': 'application/json' },
        body: JSON.stringify({ runId, ...request }),
        signal: AbortSignal.timeout(60_000),
      });
      if (response.status === 401 || response.status === 404) {
        return { behavior: 'deny', message: 'baton does not know this run any more, so the tool call is denied.' };
      }
      if (response.status === 413) {
        return {
          behavior: 'deny',
          message: 'This tool call is too large for baton to show for approval, so it is denied.',
        };
      }
      if (response.ok) {
        const answer = (await response.json()) as { state: string; behavior?: 'allow' | 'deny'; message?: string };
        if (answer.state === 'decided' && answer.behavior)
          return { behavior: answer.behavior, message: answer.message ?? '' };
        continue;
      }
    } catch {
      // The service is restarting or gone: ask again, on the port it records now.
    }
    await sleep(RETRY_MS);
    url = await currentUrl(url);
  }
}

const server = new McpServer({ name: APPROVAL_SERVER_NAME, version: '1.0.0' });
server.registerTool(
  APPROVAL_TOOL_NAME,
  {
    description: "Asks baton's owner to allow or deny a tool call.",
    inputSchema: {
      tool_name: z.string(),
      input: z.record(z.string(), z.unknown()),
      tool_use_id: z.string().optional(),
    },
  },
  async (args) => {
    const decision = await decide({
      requestId: args.tool_use_id ?? `${args.tool_name}:${JSON.stringify(args.input)}`,
      tool: args.tool_name,
      input: args.input,
    });
    const result =
      decision.behavior === 'allow'
        ? { behavior: 'allow', updatedInput: args.input }
        : { behavior: 'deny', message: decision.message };
    return { content: [{ type: 'text', text: JSON.stringify(result) }] };
  },
);
await server.connect(new StdioServerTransport());
