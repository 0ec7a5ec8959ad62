/**
 * The console's own listener for `[console] listen` (`HOST:PORT`): only the console's pages, behind
 * the same login as on 127.0.0.1; the control API (admin commands, approvals, health) stays on
 * loopback.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BatonError } from '../../core/errors.js';
import type { WebConsole } from './console.js';

/** A running console listener. */
export interface ConsoleListener {
  port: number;
  close(): Promise<void>;
}

/** `[host, port]` of `HOST:PORT` (a bracketed IPv6 host loses its brackets). */
export function splitListen(listen: string): [string, number] {
  const at = listen.lastIndexOf(':');
  return [listen.slice(0, at).replace(/^\[(.*)\]$/, '$1'), Number(listen.slice(at + 1))];
}

/**
 * Listens on `listen` with the console's handler.
 *
 * @throws BatonError `port_unavailable` when the address is taken, not this machine's, or privileged.
 */
export async function startConsoleListener(listen: string, web: WebConsole): Promise<ConsoleListener> {
  const [host, port] = splitListen(listen);
  const server = createServer((req, res) => web.handle(req, res));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
  } catch (err) {
    throw new BatonError(
      'port_unavailable',
      `[console] listen = "${listen}": cannot listen there (${(err as NodeJS.ErrnoException).code ?? String(err)}). Name an address of this machine and a free port, or remove the key to serve the console on 127.0.0.1 only.`,
      { cause: err, details: { listen } },
    );
  }
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
