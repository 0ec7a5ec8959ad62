/**
 * `baton console [--open]`: asks the running service for a one-time login link of its web
 * console and prints it (with `--open`, also opens it in the desktop's browser through
 * `xdg-open`, or `open` on macOS).
 */
import { spawn } from 'node:child_process';
import { BatonError } from '../core/errors.js';
import { readServiceState } from '../service/control-api/service-state.js';
import { LOGIN_TOKEN_TTL_MS } from '../service/console/sessions.js';
import { consoleAlsoLine, consoleLoginLine, consoleOpenFailed } from '../wording/console.js';
import { didYouMean, usageWith } from '../wording/suggest.js';
import type { CliCommand } from './command.js';

/** The usage line of `baton console`. */
export const CONSOLE_USAGE = 'Usage: baton console [--open]';

/**
 * Prints the login link.
 *
 * @returns the exit code (0).
 * @throws BatonError `usage` for a bad argument; `service_not_running` when no service answers.
 */
export const consoleCommand: CliCommand<{ batonHome: string; listen?: string }> = async (argv, context, print) => {
  const { batonHome } = context;
  const odd = argv.find((a) => a !== '--open');
  if (odd !== undefined) throw new BatonError('usage', usageWith(didYouMean(odd, ['--open']), CONSOLE_USAGE));
  const state = await readServiceState(batonHome);
  const notRunning = (cause?: unknown): BatonError =>
    new BatonError(
      'service_not_running',
      `No baton service answers for ${batonHome}: the console is served by \`baton start\`. Start it, then run \`baton console\` again.`,
      cause === undefined ? {} : { cause },
    );
  if (!state) throw notRunning();
  let path: string;
  try {
    const response = await fetch(`http://127.0.0.1:${state.port}/admin/console-login`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.adminToken}`, 'content-type': 'application/json' },
      body: '{}',
      signal: AbortSignal.timeout(10_000),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    path = ((await response.json()) as { path: string }).path;
  } catch (err) {
    throw notRunning(err);
  }
  const url = `http://127.0.0.1:${state.port}${path}`;
  print(consoleLoginLine(url, Math.round(LOGIN_TOKEN_TTL_MS / 60_000)));
  // The same token works there; the cookie it buys is that address's.
  if (context.listen) print(consoleAlsoLine(`http://${context.listen}${path}`));
  if (argv.includes('--open')) openInBrowser(url, print);
  return 0;
};

/** Starts the desktop's opener on `url`, detached; without one the printed link stays the way in. */
function openInBrowser(url: string, say: (line: string) => void): void {
  const opener = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const child = spawn(opener, [url], { detached: true, stdio: 'ignore' });
  child.on('error', (err) => say(consoleOpenFailed(opener, err.message)));
  child.unref();
}
