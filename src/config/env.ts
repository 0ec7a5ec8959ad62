/**
 * The environment baton reads: secrets and connection strings, service paths
 * and ports. Only `main.ts` passes `process.env` in; everything else receives a {@link BatonEnv}.
 * Values are never echoed in errors: most of them are secrets.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv as parseDotEnv } from 'node:util';
import { BatonError } from '../core/errors.js';
import { resolveUserPath } from './resolve.js';

/** pino's level names, `silent` included. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino level name. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * What a variable holds, which decides how it is checked and whether it is a secret
 * (`home_path`: absolute, or starting with `~/`).
 */
export type EnvKind = 'secret' | 'http_url' | 'postgres_url' | 'port' | 'path' | 'home_path' | 'log_level';

/** One environment variable baton reads. */
export interface EnvVarDoc {
  readonly name: string;
  readonly kind: EnvKind;
  /** One line for `.env.example` and the README. */
  readonly description: string;
}

/** Every variable baton reads, in `.env.example` order. */
export const ENV_VARS: readonly EnvVarDoc[] = [
  {
    name: 'BATON_HOME',
    kind: 'path',
    description: 'State directory (config.toml, pgdata/, harness/runs/, traces/, logs/); default ~/.baton',
  },
  {
    name: 'BATON_LOG_LEVEL',
    kind: 'log_level',
    description: 'Log level: fatal, error, warn, info, debug, trace or silent; default info',
  },
  {
    name: 'BATON_HTTP_PORT',
    kind: 'port',
    description:
      "Port of baton's health and admin listener on 127.0.0.1, 1-65535; unset: a free port, recorded in $BATON_HOME/service.json",
  },
  {
    name: 'DATABASE_URL',
    kind: 'postgres_url',
    description:
      'postgres:// or postgresql:// URL; unset: embedded PostgreSQL in $BATON_HOME/postgres (embedded PGlite in $BATON_HOME/pgdata as root)',
  },
  {
    name: 'TELEGRAM_BOT_TOKEN',
    kind: 'secret',
    description: 'Telegram bot token from @BotFather; unset: Telegram is skipped',
  },
  {
    name: 'TELEGRAM_API_ROOT',
    kind: 'http_url',
    description: 'Self-hosted Bot API server root; unset: https://api.telegram.org',
  },
  { name: 'SLACK_BOT_TOKEN', kind: 'secret', description: 'Slack bot token (xoxb-...); unset: Slack is skipped' },
  { name: 'SLACK_APP_TOKEN', kind: 'secret', description: 'Slack app-level token (xapp-...) for Socket Mode' },
  {
    name: 'SLACK_SIGNING_SECRET',
    kind: 'secret',
    description: 'Slack signing secret for the HTTP Events API (with SLACK_PORT), instead of Socket Mode',
  },
  { name: 'SLACK_PORT', kind: 'port', description: 'Port the HTTP Events API receiver listens on, 1-65535' },
  {
    name: 'SLACK_API_URL',
    kind: 'http_url',
    description: 'Slack Web API base URL (a proxy); unset: https://slack.com/api/',
  },
  { name: 'DISCORD_BOT_TOKEN', kind: 'secret', description: 'Discord bot token; unset: Discord is skipped' },
  {
    name: 'DISCORD_API_URL',
    kind: 'http_url',
    description: 'Discord REST API base URL (a proxy); unset: https://discord.com/api',
  },
  {
    name: 'CODEX_HOME',
    kind: 'home_path',
    description: 'CODEX_HOME for codex runs when [harness] codex_home is unset (absolute, or ~/…)',
  },
  {
    name: 'CLAUDE_CONFIG_DIR',
    kind: 'home_path',
    description: 'CLAUDE_CONFIG_DIR for claude runs when [harness] claude_config_dir is unset (absolute, or ~/…)',
  },
  {
    name: 'ANTHROPIC_API_KEY',
    kind: 'secret',
    description:
      'Never passed to runs (each CLI uses its own login); read only so its value is kept out of logs and messages',
  },
];

/**
 * Names whose values are secrets: never logged, never shown, never passed to a vendor child
 * (this build passes ANTHROPIC_API_KEY to no run).
 */
export const SECRET_ENV_NAMES: readonly string[] = [
  'DATABASE_URL',
  ...ENV_VARS.filter((v) => v.kind === 'secret').map((v) => v.name),
];

/** The validated environment. Empty strings count as unset (undefined). */
export interface BatonEnv {
  /** `BATON_HOME` as given (unexpanded); see {@link resolveBatonHome}. */
  readonly batonHome: string | undefined;
  /** `BATON_LOG_LEVEL`. @default 'info' */
  readonly logLevel: LogLevel;
  /** `BATON_HTTP_PORT`, TCP port. */
  readonly httpPort: number | undefined;
  /** `DATABASE_URL` (secret); undefined → the embedded database (src/store/embedded-postgres.ts). */
  readonly databaseUrl: string | undefined;
  /** `TELEGRAM_BOT_TOKEN` (secret). */
  readonly telegramBotToken: string | undefined;
  /** `TELEGRAM_API_ROOT`, an http(s) URL. */
  readonly telegramApiRoot: string | undefined;
  /** `SLACK_BOT_TOKEN` (secret). */
  readonly slackBotToken: string | undefined;
  /** `SLACK_APP_TOKEN` (secret), Socket Mode. */
  readonly slackAppToken: string | undefined;
  /** `SLACK_SIGNING_SECRET` (secret), HTTP Events API. */
  readonly slackSigningSecret: string | undefined;
  /** `SLACK_PORT`, TCP port of the HTTP Events API receiver. */
  readonly slackPort: number | undefined;
  /** `SLACK_API_URL`, an http(s) URL. */
  readonly slackApiUrl: string | undefined;
  /** `DISCORD_BOT_TOKEN` (secret). */
  readonly discordBotToken: string | undefined;
  /** `DISCORD_API_URL`, an http(s) URL. */
  readonly discordApiUrl: string | undefined;
  /** `CODEX_HOME` of the service, as given. */
  readonly codexHome: string | undefined;
  /** `CLAUDE_CONFIG_DIR` of the service, as given. */
  readonly claudeConfigDir: string | undefined;
  /** `ANTHROPIC_API_KEY` (secret). */
  readonly anthropicApiKey: string | undefined;
}

/** Checks one value; returns what is wrong (never quoting the value), or undefined if fine. */
function check(kind: EnvKind, value: string): string | undefined {
  switch (kind) {
    case 'secret':
      return /[\s\p{Cc}]/u.test(value)
        ? 'contains whitespace or control characters (a stray space or newline from pasting?)'
        : undefined;
    case 'path':
      return value.includes('\0') ? 'contains a NUL character' : undefined;
    case 'home_path':
      // A relative path would be resolved by the CLI against the run's directory: inside the
      // repository, whose files are untrusted.
      if (value.includes('\0')) return 'contains a NUL character';
      return path.isAbsolute(value) || value === '~' || value.startsWith('~/')
        ? undefined
        : 'must be an absolute path or start with ~/ (a relative one would point into the repository a run works in)';
    case 'log_level':
      return (LOG_LEVELS as readonly string[]).includes(value) ? undefined : `must be one of ${LOG_LEVELS.join(', ')}`;
    case 'port': {
      const port = /^\d{1,5}$/.test(value) ? Number(value) : NaN;
      return port >= 1 && port <= 65535 ? undefined : 'must be a whole number from 1 to 65535';
    }
    case 'http_url': {
      const url = URL.canParse(value) ? new URL(value) : undefined;
      const ok = url !== undefined && (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
      return ok ? undefined : 'must be an http:// or https:// URL';
    }
    case 'postgres_url': {
      const url = URL.canParse(value) ? new URL(value) : undefined;
      const ok = url !== undefined && (url.protocol === 'postgres:' || url.protocol === 'postgresql:');
      return ok ? undefined : 'must be a postgres:// or postgresql:// URL';
    }
  }
}

/**
 * Validates baton's environment variables.
 *
 * @param env usually `process.env` merged with `.env` files by {@link mergeEnv}.
 * @throws BatonError `env_invalid` listing every bad variable by name and what is wrong with it;
 *   the message and `details.variables` never contain a value.
 */
export function parseEnv(env: Readonly<Record<string, string | undefined>>): BatonEnv {
  const problems: { name: string; message: string }[] = [];
  const values = new Map<string, string>();
  for (const { name, kind } of ENV_VARS) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = kind === 'log_level' ? raw.toLowerCase() : raw;
    const wrong = check(kind, value);
    if (wrong === undefined) values.set(name, value);
    else problems.push({ name, message: `${name} ${wrong}` });
  }
  if (problems.length > 0) {
    const lines = problems.map((p) => `  ${p.message}`).join('\n');
    const fix = `Fix ${problems.length === 1 ? 'it' : 'them'} in the environment or .env, then restart baton.`;
    throw new BatonError('env_invalid', `Invalid environment:\n${lines}\n${fix}`, { details: { variables: problems } });
  }
  const port = (name: string): number | undefined => (values.has(name) ? Number(values.get(name)) : undefined);
  return {
    batonHome: values.get('BATON_HOME'),
    logLevel: (values.get('BATON_LOG_LEVEL') ?? 'info') as LogLevel,
    httpPort: port('BATON_HTTP_PORT'),
    databaseUrl: values.get('DATABASE_URL'),
    telegramBotToken: values.get('TELEGRAM_BOT_TOKEN'),
    telegramApiRoot: values.get('TELEGRAM_API_ROOT'),
    slackBotToken: values.get('SLACK_BOT_TOKEN'),
    slackAppToken: values.get('SLACK_APP_TOKEN'),
    slackSigningSecret: values.get('SLACK_SIGNING_SECRET'),
    slackPort: port('SLACK_PORT'),
    slackApiUrl: values.get('SLACK_API_URL'),
    discordBotToken: values.get('DISCORD_BOT_TOKEN'),
    discordApiUrl: values.get('DISCORD_API_URL'),
    codexHome: values.get('CODEX_HOME'),
    claudeConfigDir: values.get('CLAUDE_CONFIG_DIR'),
    anthropicApiKey: values.get('ANTHROPIC_API_KEY'),
  };
}

/**
 * The secret values present in `env` (tokens, signing secret, DATABASE_URL and its password
 * alone), for scrubbing text that may embed one, such as an SDK error quoting a request URL.
 */
export function secretValues(env: BatonEnv): string[] {
  const found = [
    env.databaseUrl,
    env.telegramBotToken,
    env.slackBotToken,
    env.slackAppToken,
    env.slackSigningSecret,
    env.discordBotToken,
    env.anthropicApiKey,
  ];
  if (env.databaseUrl !== undefined) {
    const password = new URL(env.databaseUrl).password;
    if (password !== '') found.push(password, safeDecode(password));
  }
  return [...new Set(found.filter((v): v is string => v !== undefined && v !== ''))];
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The state directory: `BATON_HOME` with `~` expanded (a relative value is taken relative to the
 * process cwd, as a shell would), else `~/.baton`.
 *
 * @param homeDir absolute home directory.
 */
export function resolveBatonHome(env: Pick<BatonEnv, 'batonHome'>, homeDir: string): string {
  return resolveUserPath(env.batonHome ?? '~/.baton', { homeDir, baseDir: path.resolve() });
}

/**
 * Reads `.env` files with Node's `util.parseEnv`. A variable set by an earlier path wins over a
 * later one; missing files are skipped.
 *
 * @throws BatonError `config_unreadable` when a file exists but cannot be read (names the file).
 */
export async function readDotEnvFiles(paths: readonly string[]): Promise<Record<string, string>> {
  // No prototype: a `__proto__=` line in a .env file is just an odd name.
  const vars = Object.create(null) as Record<string, string>;
  for (const file of paths) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') continue;
      throw new BatonError('config_unreadable', `Cannot read ${path.resolve(file)} (${code ?? 'unknown error'}).`, {
        cause: err,
        details: { file: path.resolve(file), errno: code },
      });
    }
    for (const [name, value] of Object.entries(parseDotEnv(text))) {
      if (value !== undefined && !Object.hasOwn(vars, name)) vars[name] = value;
    }
  }
  return vars;
}

/**
 * Layers `.env` values under the real environment: a variable the process has (non-empty) wins;
 * a file value fills in one that is unset or empty.
 */
export function mergeEnv(
  fileVars: Readonly<Record<string, string>>,
  processEnv: Readonly<Record<string, string | undefined>>,
): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...processEnv };
  for (const [name, value] of Object.entries(fileVars)) {
    const current = merged[name];
    if (current === undefined || current === '') merged[name] = value;
  }
  return merged;
}
