/**
 * A `CODEX_HOME` that points the real codex CLI at a fake model server on loopback.
 *
 * Source of the provider settings: shared/spec/VENDOR-CLI.md ("Pointing a real CLI at a fake
 * model"). Measured on codex 0.171.0 with `strace -f -e connect,sendto` while running
 * `codex exec --json` against the fake:
 *
 * - With only the spec's settings codex resolves `github.com`, `api.github.com` and
 *   `chatgpt.com` (plugin marketplace sync / remote plugin catalog) and `ab.chatgpt.com` (OTLP
 *   analytics metrics) in background tasks, whatever the outcome of the run.
 *   `[features] plugins = false` stops the first three, `[analytics] enabled = false` the last
 *   (`[otel] metrics_exporter = "none"` would too). With both, the only connections are to the
 *   model server. `codex exec` makes no update check; no API key or `auth.json` is needed.
 * - Unknown keys in config.toml are ignored silently, so a typo here would not fail loudly:
 *   the e2e smoke test is what proves the settings still work.
 * - A CODEX_HOME under the system temp dir makes codex print
 *   `WARNING: proceeding, even though we could not create PATH aliases: Refusing to create
 *   helper binaries under temporary dir "/tmp"` on stderr and skip its `apply_patch` /
 *   `codex-linux-sandbox` helper links. Harmless for `exec`: the sandboxed `exec_command` tool
 *   still runs. Without CODEX_HOME it would create them under `~/.codex/tmp/arg0-linux/`.
 * - Every run prints an `item.completed` of type `error` ("Model metadata for `fake-model` not
 *   found") before `turn.started`: a warning, not a failure.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The model name the fake provider is configured with. */
export const FAKE_MODEL_NAME = 'fake-model';

/**
 * Creates `dir` (if needed) and writes `dir/config.toml` for the fake model server.
 *
 * @param dir the directory to use as `CODEX_HOME`.
 * @param modelBaseUrl the fake server's origin, e.g. `http://127.0.0.1:40123` (no `/v1`).
 * @returns `dir`, ready to be passed as `CODEX_HOME`.
 * @throws Error when `modelBaseUrl` is not on loopback: a test must never reach a real model.
 */
export async function makeCodexHome(dir: string, modelBaseUrl: string): Promise<string> {
  const url = new URL(modelBaseUrl);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost' && url.hostname !== '[::1]') {
    throw new Error(`makeCodexHome: model server must be on loopback, got ${modelBaseUrl}`);
  }
  const baseUrl = `${modelBaseUrl.replace(/\/+$/, '')}/v1`;
  const toml = [
    `model = ${tomlString(FAKE_MODEL_NAME)}`,
    'model_provider = "fake"',
    'sandbox_mode = "workspace-write"',
    '',
    '# No background traffic to OpenAI/GitHub: see test/support/codex-home.ts.',
    '[analytics]',
    'enabled = false',
    '',
    '[features]',
    'plugins = false',
    '',
    '[model_providers.fake]',
    'name = "fake"',
    `base_url = ${tomlString(baseUrl)}`,
    'wire_api = "responses"',
    '# Fail fast: only the provider-table keys count; top-level keys of these names are ignored.',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
  ].join('\n');
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.toml'), toml, { mode: 0o600 });
  return dir;
}

/** A TOML basic string; JSON's escaping is a subset TOML accepts for these values. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}
