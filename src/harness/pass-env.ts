/**
 * Which names of the service's environment a run's child may also get (`[harness] pass_env`):
 * the environment is rebuilt from nothing, which also dropped the proxy, CA-bundle
 * and locale settings a run needs on a corporate network. Names only ever travel here; values go
 * straight from the service environment to the child.
 */
import { dirname, join } from 'node:path';
import type { VendorName } from './vendors/types.js';

/** Names whose value looks like a credential; they pass only when listed by their exact name. */
const SECRET_LOOKING = /(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_?KEY|PRIVATE|_KEY$|^KEY$|AUTH|COOKIE|SESSION)/i;

/** Whether `name` looks like it holds a secret (so a wildcard never passes it). */
export function looksSecret(name: string): boolean {
  return SECRET_LOOKING.test(name);
}

/**
 * Names that change which account a vendor CLI uses, where it sends requests, or who is billed:
 * worth a doctor flag when a child gets them (codex: OpenAI API key and base URL; claude:
 * Anthropic key/token/base URL, Bedrock and Vertex switches, per each CLI's documented env).
 */
const ACCOUNT_CHANGING: Record<VendorName, RegExp> = {
  codex:
    /^(OPENAI_API_KEY|CODEX_API_KEY|OPENAI_BASE_URL|OPENAI_ORG_ID|OPENAI_ORGANIZATION|OPENAI_PROJECT|AZURE_OPENAI_API_KEY|CODEX_CA_CERTIFICATE)$/,
  claude:
    /^(ANTHROPIC_API_KEY|ANTHROPIC_AUTH_TOKEN|ANTHROPIC_BASE_URL|ANTHROPIC_MODEL|CLAUDE_CODE_OAUTH_TOKEN|CLAUDE_CODE_USE_BEDROCK|CLAUDE_CODE_USE_VERTEX|AWS_.*|GOOGLE_APPLICATION_CREDENTIALS|CLOUD_ML_REGION|ANTHROPIC_VERTEX_PROJECT_ID)$/,
};

/** Whether giving `name` to `vendor`'s CLI changes its login, endpoint or billing. */
export function changesAccount(vendor: VendorName, name: string): boolean {
  return ACCOUNT_CHANGING[vendor].test(name);
}

/**
 * The entries of the service environment that `passEnv` lets through, sorted by name. An exact
 * entry passes its name when set (even one that looks secret: the owner listed it); a `PREFIX*`
 * entry passes every set name with that prefix except ones that look secret. `never` names (the
 * service's own secrets) never pass.
 */
export function selectPassEnv(
  passEnv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  never: readonly string[],
): Record<string, string> {
  const exact = new Set(passEnv.filter((e) => !e.endsWith('*')));
  const prefixes = passEnv.filter((e) => e.endsWith('*')).map((e) => e.slice(0, -1));
  const blocked = new Set(never);
  const out: Record<string, string> = {};
  for (const name of Object.keys(env).sort()) {
    const value = env[name];
    if (value === undefined || blocked.has(name) || name.startsWith('BATON_')) continue;
    if (exact.has(name) || (prefixes.some((p) => name.startsWith(p)) && !looksSecret(name))) out[name] = value;
  }
  return out;
}

/**
 * `PATH` without npm's run-script directories: under `npm start` (npm sets
 * `npm_lifecycle_event`) npm puts every `node_modules/.bin` up the tree and its own
 * `node-gyp-bin` in front of `PATH` (npm's `@npmcli/run-script`), which would let the project's
 * dependencies shadow the user's tools inside a run. Only that leading run of entries is dropped,
 * only under npm, and only the `node_modules/.bin` of the package's own directory and its
 * ancestors (from `npm_package_json`): a user whose PATH begins with some other
 * `node_modules/.bin` (a CLI installed there) keeps it.
 */
export function withoutNpmRunScriptDirs(path: string, env: Readonly<Record<string, string | undefined>>): string {
  if (!env['npm_lifecycle_event']) return path;
  const npmDirs = new Set<string>();
  const packageJson = env['npm_package_json'];
  if (packageJson) {
    for (let dir = dirname(packageJson); ; dir = dirname(dir)) {
      npmDirs.add(join(dir, 'node_modules', '.bin'));
      if (dirname(dir) === dir) break;
    }
  }
  const dirs = path.split(':');
  let first = 0;
  while (
    first < dirs.length &&
    (npmDirs.has(dirs[first]!.replace(/\/+$/, '')) || /\/node-gyp-bin\/?$/.test(dirs[first]!))
  )
    first += 1;
  return dirs.slice(first).join(':');
}
