/**
 * Vendor login state read from files only: no network, no keychain, no CLI call.
 * File layouts are the ones the pinned CLIs write (see docs/vendors/). A token or key
 * is only ever tested for presence; no value leaves these functions.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';

/** How a vendor CLI is logged in, as far as its files tell. `detail` says why, never a secret. */
export type LoginState =
  | {
      readonly state: 'authenticated';
      readonly method: 'chatgpt' | 'api_key' | 'credentials_file' | 'model_provider';
      readonly detail: string;
    }
  | { readonly state: 'unverified'; readonly detail: string }
  | { readonly state: 'not_authenticated'; readonly detail: string };

function errnoOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'unknown error';
}

function nonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * codex's login: `CODEX_HOME/auth.json` with `tokens.refresh_token` → ChatGPT login, with
 * `OPENAI_API_KEY` → API-key login (when both, `auth_mode: "apikey"` picks the key); a missing,
 * unreadable or malformed file, or one with neither, → not authenticated.
 *
 * @param codexHome absolute CODEX_HOME, from `resolveVendorHomes` (the one runs use).
 */
export async function codexLoginState(codexHome: string): Promise<LoginState> {
  const provider = await customProviderState(codexHome);
  if (provider) return provider;
  const file = join(codexHome, 'auth.json');
  const fix = `run \`codex login\` as the user baton runs as, with CODEX_HOME=${codexHome}`;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = errnoOf(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'not_authenticated', detail: `no ${file}: ${fix}` };
    return { state: 'not_authenticated', detail: `cannot read ${file} (${code}); fix its permissions or ${fix}` };
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // JSON.parse's message quotes the text, which may hold a token: say nothing more.
    return { state: 'not_authenticated', detail: `${file} is not valid JSON: ${fix}` };
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { state: 'not_authenticated', detail: `${file} does not hold a JSON object: ${fix}` };
  }
  const auth = data as { auth_mode?: unknown; tokens?: unknown; OPENAI_API_KEY?: unknown };
  const tokens =
    typeof auth.tokens === 'object' && auth.tokens !== null ? (auth.tokens as { refresh_token?: unknown }) : {};
  const chatgpt = nonEmptyString(tokens.refresh_token);
  const apiKey = nonEmptyString(auth.OPENAI_API_KEY);
  if (apiKey && (auth.auth_mode === 'apikey' || !chatgpt)) {
    return { state: 'authenticated', method: 'api_key', detail: `API-key login (OPENAI_API_KEY in ${file})` };
  }
  if (chatgpt) return { state: 'authenticated', method: 'chatgpt', detail: `ChatGPT login (refresh token in ${file})` };
  return {
    state: 'not_authenticated',
    detail: `${file} holds neither a refresh token (ChatGPT login) nor OPENAI_API_KEY: ${fix}`,
  };
}

/**
 * A custom `model_provider` in `CODEX_HOME/config.toml` carries its own credentials, so
 * `auth.json` does not matter for it (codex config: `model_provider`, `[model_providers.NAME]`
 * with `env_key`, `experimental_bearer_token`, `requires_openai_auth`). Only presence is looked at.
 *
 * @returns undefined when codex uses OpenAI (no or "openai" provider, or one with
 *   `requires_openai_auth = true`), or config.toml is absent or unreadable: then auth.json decides.
 */
async function customProviderState(codexHome: string): Promise<LoginState | undefined> {
  const file = join(codexHome, 'config.toml');
  let config: Record<string, unknown>;
  try {
    config = parseToml(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return undefined; // codex itself reports a broken config.toml; its message may quote a secret
  }
  const name = config.model_provider;
  if (typeof name !== 'string' || name === '' || name === 'openai') return undefined;
  const providers =
    typeof config.model_providers === 'object' && config.model_providers !== null
      ? (config.model_providers as Record<string, unknown>)
      : {};
  const entry = providers[name];
  const table = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : undefined;
  if (table?.requires_openai_auth === true) return undefined;
  const label = `model provider "${name}" in ${file}`;
  if (!table) return { state: 'unverified', detail: `${label} (a built-in provider); doctor does not check its login` };
  if (nonEmptyString(table.experimental_bearer_token))
    return {
      state: 'authenticated',
      method: 'model_provider',
      detail: `${label}, with its API key in experimental_bearer_token`,
    };
  if (nonEmptyString(table.env_key)) {
    return {
      state: 'not_authenticated',
      detail: `${label} reads its API key from $${String(table.env_key)}, which runs do not get (their environment holds only HOME, PATH, TERM, USER and CODEX_HOME): put the key in the provider's experimental_bearer_token`,
    };
  }
  return { state: 'authenticated', method: 'model_provider', detail: `${label}, which asks for no API key` };
}

/**
 * claude's login: `CLAUDE_CONFIG_DIR/.credentials.json` present → authenticated; only the
 * directory → unverified (the credential may be in the macOS keychain, or an API key may come
 * from settings, neither of which the doctor reads); neither → not authenticated.
 *
 * @param claudeConfigDir absolute CLAUDE_CONFIG_DIR, from `resolveVendorHomes`.
 * @param platform only macOS has a keychain claude may use instead of the file;
 *   elsewhere the detail says how to log in.
 */
export async function claudeLoginState(
  claudeConfigDir: string,
  platform: NodeJS.Platform = process.platform,
): Promise<LoginState> {
  const file = join(claudeConfigDir, '.credentials.json');
  const fix = `run \`claude\` and log in as the user baton runs as, with CLAUDE_CONFIG_DIR=${claudeConfigDir}`;
  try {
    if ((await stat(file)).isFile())
      return { state: 'authenticated', method: 'credentials_file', detail: `credentials in ${file}` };
  } catch (err) {
    const code = errnoOf(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') {
      return {
        state: 'not_authenticated',
        detail: `cannot look into ${claudeConfigDir} (${code}); fix its permissions or ${fix}`,
      };
    }
  }
  try {
    if ((await stat(claudeConfigDir)).isDirectory()) {
      return {
        state: 'unverified',
        detail:
          platform === 'darwin'
            ? `${claudeConfigDir} has no .credentials.json: claude may use the macOS keychain or an API key, which doctor does not check`
            : `${claudeConfigDir} has no .credentials.json, where claude keeps its login on this system: unless an API key comes from its settings (doctor does not check), ${fix}`,
      };
    }
    return { state: 'not_authenticated', detail: `${claudeConfigDir} is not a directory: ${fix}` };
  } catch {
    return { state: 'not_authenticated', detail: `${claudeConfigDir} does not exist: ${fix}` };
  }
}
