/**
 * A `CLAUDE_CONFIG_DIR` that points the real claude CLI at a fake Anthropic server on loopback.
 *
 * Source of the settings: shared/spec/VENDOR-CLI.md ("Pointing a real CLI at a fake model").
 * Measured on claude 2.1.197 (`claude -p --output-format stream-json --verbose`, environment
 * reduced to HOME, PATH, USER, TERM and CLAUDE_CONFIG_DIR, run as root) with
 * `strace -f -e trace=connect,sendto,sendmmsg`:
 *
 * - With this `settings.json` the only connections are to the fake (plus a failed lookup of
 *   the nscd socket): no DNS query at all, also for tool-using and resumed runs.
 * - Without `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` claude resolves `api.anthropic.com`
 *   in the background (5 DNS queries per run) although `ANTHROPIC_BASE_URL` points elsewhere,
 *   and offers an extra tool (`DesignSync`).
 * - `CLAUDE_CODE_MAX_RETRIES=0`: an API error is one request and the run ends within about a
 *   second; without it claude retries 10 times over about 3 minutes (VENDOR-CLI.md).
 * - No onboarding, theme or trust prompt and no API-key approval in `-p` mode: nothing is
 *   printed on stderr and nothing else is needed in this directory. claude creates
 *   `.claude.json` (first start time, machine and user ids), `backups/`, `sessions/` and
 *   `projects/<cwd with / → ->/<session id>.jsonl` here itself, and writes nothing under HOME.
 * - The API key reaches the fake as header `x-api-key`; `apiKeySource` in `system/init` reads
 *   `ANTHROPIC_API_KEY`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A dummy subscription token: with `CLAUDE_CODE_OAUTH_TOKEN` instead of an API key, claude 2.1.332
 * reads the plan's `anthropic-ratelimit-unified-*` headers and prints `rate_limit_event` lines
 * (docs/vendors/quota.md); with an API key it ignores them.
 */
export const FAKE_CLAUDE_OAUTH_TOKEN = 'sk-ant-oat01-fake-token-for-tests';

/** The dummy API key the config dir hands to claude; the fake accepts any key. */
export const FAKE_ANTHROPIC_API_KEY = 'sk-ant-fake-key-for-tests';

/**
 * Creates `dir` (if needed) and writes `dir/settings.json` for the fake Anthropic server.
 *
 * @param dir the directory to use as `CLAUDE_CONFIG_DIR`.
 * @param baseUrl the fake server's origin, e.g. `http://127.0.0.1:40123` (no `/v1`).
 * @param options.auth `subscription` logs claude in with a dummy plan token. @default 'api_key'
 * @returns `dir`, ready to be passed as `CLAUDE_CONFIG_DIR`.
 * @throws Error when `baseUrl` is not on loopback: a test must never reach a real model.
 */
export async function makeClaudeConfigDir(
  dir: string,
  baseUrl: string,
  options: { auth?: 'api_key' | 'subscription' } = {},
): Promise<string> {
  const url = new URL(baseUrl);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost' && url.hostname !== '[::1]') {
    throw new Error(`makeClaudeConfigDir: model server must be on loopback, got ${baseUrl}`);
  }
  const settings = {
    env: {
      ANTHROPIC_BASE_URL: url.origin,
      ...(options.auth === 'subscription'
        ? { CLAUDE_CODE_OAUTH_TOKEN: FAKE_CLAUDE_OAUTH_TOKEN }
        : { ANTHROPIC_API_KEY: FAKE_ANTHROPIC_API_KEY }),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      CLAUDE_CODE_MAX_RETRIES: '0',
    },
  };
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return dir;
}
