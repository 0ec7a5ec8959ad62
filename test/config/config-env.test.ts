import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ENV_VARS,
  SECRET_ENV_NAMES,
  mergeEnv,
  parseEnv,
  readDotEnvFiles,
  resolveBatonHome,
  secretValues,
} from '../../src/config/index.js';

const TOKEN = '123456:AAH-super-secret-token-text';

/** Runs `parseEnv` expecting `env_invalid`; returns the error. */
function refusal(env: Record<string, string>): Error & { details: Record<string, unknown> } {
  try {
    parseEnv(env);
  } catch (err) {
    expect(err).toMatchObject({ code: 'env_invalid' });
    return err as Error & { details: Record<string, unknown> };
  }
  throw new Error('expected env_invalid, nothing was thrown');
}

describe('parseEnv', () => {
  it('accepts an empty environment with defaults', () => {
    const env = parseEnv({});
    expect(env.logLevel).toBe('info');
    expect(env.databaseUrl).toBeUndefined();
    expect(env.telegramBotToken).toBeUndefined();
    expect(env.httpPort).toBeUndefined();
  });

  it('reads every variable', () => {
    const env = parseEnv({
      BATON_HOME: '~/state',
      BATON_LOG_LEVEL: 'DEBUG',
      BATON_HTTP_PORT: '8080',
      DATABASE_URL: 'postgresql://baton:pw@127.0.0.1:5432/baton',
      TELEGRAM_BOT_TOKEN: TOKEN,
      TELEGRAM_API_ROOT: 'http://127.0.0.1:8081',
      SLACK_BOT_TOKEN: 'xoxb-1',
      SLACK_APP_TOKEN: 'xapp-1',
      SLACK_SIGNING_SECRET: 'abc',
      SLACK_PORT: '3000',
      SLACK_API_URL: 'https://slack.example/api/',
      DISCORD_BOT_TOKEN: 'd.t.x',
      DISCORD_API_URL: 'https://discord.example/api',
      CODEX_HOME: '/c',
      CLAUDE_CONFIG_DIR: '/d',
      ANTHROPIC_API_KEY: 'sk-x',
      UNRELATED: 'ignored',
    });
    expect(env).toEqual({
      batonHome: '~/state',
      logLevel: 'debug',
      httpPort: 8080,
      databaseUrl: 'postgresql://baton:pw@127.0.0.1:5432/baton',
      telegramBotToken: TOKEN,
      telegramApiRoot: 'http://127.0.0.1:8081',
      slackBotToken: 'xoxb-1',
      slackAppToken: 'xapp-1',
      slackSigningSecret: 'abc',
      slackPort: 3000,
      slackApiUrl: 'https://slack.example/api/',
      discordBotToken: 'd.t.x',
      discordApiUrl: 'https://discord.example/api',
      codexHome: '/c',
      claudeConfigDir: '/d',
      anthropicApiKey: 'sk-x',
    });
  });

  it('treats empty strings as unset', () => {
    const env = parseEnv({ DATABASE_URL: '', TELEGRAM_BOT_TOKEN: '', SLACK_PORT: '', BATON_LOG_LEVEL: '' });
    expect(env).toMatchObject({
      databaseUrl: undefined,
      telegramBotToken: undefined,
      slackPort: undefined,
      logLevel: 'info',
    });
  });

  it('names a bad token but never echoes it', () => {
    const bad = `${TOKEN}\n`;
    const error = refusal({ TELEGRAM_BOT_TOKEN: bad });
    expect(error.message).toContain('TELEGRAM_BOT_TOKEN');
    expect(error.message).not.toContain(TOKEN);
    expect(JSON.stringify(error.details)).not.toContain(TOKEN);
  });

  it('refuses a DATABASE_URL that is not postgres, without echoing it', () => {
    const url = 'mysql://root:hunter2-secret@db:3306/baton';
    const error = refusal({ DATABASE_URL: url });
    expect(error.message).toContain('DATABASE_URL');
    expect(error.message).not.toContain('hunter2-secret');
    expect(JSON.stringify(error.details)).not.toContain('hunter2-secret');
    expect(() => parseEnv({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL/);
    expect(parseEnv({ DATABASE_URL: 'postgres://localhost/baton' }).databaseUrl).toBe('postgres://localhost/baton');
  });

  it.each(['ftp://api.example', 'api.example', 'file:///tmp/x', 'https://'])(
    'refuses TELEGRAM_API_ROOT = %s',
    (value) => {
      expect(refusal({ TELEGRAM_API_ROOT: value }).details).toEqual({
        variables: [{ name: 'TELEGRAM_API_ROOT', message: expect.stringContaining('TELEGRAM_API_ROOT') }],
      });
    },
  );

  it.each(['0', '65536', '80.5', 'abc', '-1', ' 80'])('refuses port %j', (value) => {
    expect(refusal({ SLACK_PORT: value }).message).toContain('SLACK_PORT');
    expect(refusal({ BATON_HTTP_PORT: value }).message).toContain('BATON_HTTP_PORT');
  });

  it('accepts the port range ends', () => {
    expect(parseEnv({ SLACK_PORT: '1', BATON_HTTP_PORT: '65535' })).toMatchObject({ slackPort: 1, httpPort: 65535 });
  });

  it('refuses an unknown log level', () => {
    expect(refusal({ BATON_LOG_LEVEL: 'verbose' }).message).toContain('BATON_LOG_LEVEL');
  });

  it('lists every bad variable in one error', () => {
    const error = refusal({ SLACK_PORT: 'x', DISCORD_API_URL: 'nope', DISCORD_BOT_TOKEN: 'a b' });
    const names = (error.details['variables'] as { name: string }[]).map((v) => v.name).sort();
    expect(names).toEqual(['DISCORD_API_URL', 'DISCORD_BOT_TOKEN', 'SLACK_PORT']);
    expect(error.message).not.toContain('a b');
  });
});

describe('secrets', () => {
  it('lists the tokens, the signing secret and DATABASE_URL', () => {
    expect(SECRET_ENV_NAMES).toEqual(
      expect.arrayContaining([
        'DATABASE_URL',
        'TELEGRAM_BOT_TOKEN',
        'SLACK_BOT_TOKEN',
        'SLACK_APP_TOKEN',
        'SLACK_SIGNING_SECRET',
        'DISCORD_BOT_TOKEN',
      ]),
    );
    expect(SECRET_ENV_NAMES).not.toContain('TELEGRAM_API_ROOT');
  });

  it('collects the secret values present, the database password included', () => {
    const env = parseEnv({ DATABASE_URL: 'postgres://u:p%40ss@h/db', TELEGRAM_BOT_TOKEN: TOKEN, SLACK_PORT: '3000' });
    expect(secretValues(env).sort()).toEqual(['p%40ss', 'p@ss', 'postgres://u:p%40ss@h/db', TOKEN].sort());
  });
});

describe('resolveBatonHome', () => {
  it('defaults to ~/.baton and expands ~', () => {
    expect(resolveBatonHome({ batonHome: undefined }, '/home/me')).toBe('/home/me/.baton');
    expect(resolveBatonHome({ batonHome: '~/state/' }, '/home/me')).toBe('/home/me/state');
    expect(resolveBatonHome({ batonHome: '/srv/baton' }, '/home/me')).toBe('/srv/baton');
    expect(resolveBatonHome({ batonHome: 'rel' }, '/home/me')).toBe(path.resolve('rel'));
  });
});

describe('.env files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'baton-env-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads files in order, earlier ones winning, and skips missing ones', async () => {
    const first = path.join(dir, 'first.env');
    const second = path.join(dir, 'second.env');
    await writeFile(first, 'A=from-first\n# a comment\nB="quoted value"\n');
    await writeFile(second, 'A=from-second\nC=only-second\n');
    const vars = await readDotEnvFiles([path.join(dir, 'missing.env'), first, second]);
    expect({ ...vars }).toEqual({ A: 'from-first', B: 'quoted value', C: 'only-second' });
  });

  it('refuses an unreadable file as config_unreadable naming it', async () => {
    await expect(readDotEnvFiles([dir])).rejects.toMatchObject({ code: 'config_unreadable', details: { file: dir } });
  });

  it('lets the real environment win, and fills in what it leaves unset or empty', () => {
    const merged = mergeEnv({ A: 'file', B: 'file', C: 'file' }, { A: 'process', B: '', D: 'process' });
    expect(merged).toEqual({ A: 'process', B: 'file', C: 'file', D: 'process' });
  });

  it('feeds parseEnv end to end', async () => {
    const file = path.join(dir, '.env');
    await writeFile(file, `TELEGRAM_BOT_TOKEN=${TOKEN}\nSLACK_PORT=3000\n`);
    const env = parseEnv(mergeEnv(await readDotEnvFiles([file]), { SLACK_PORT: '4000' }));
    expect(env).toMatchObject({ telegramBotToken: TOKEN, slackPort: 4000 });
  });
});

describe('.env.example', () => {
  it('lists every variable baton reads, each with a comment and no secret value', async () => {
    const text = await readFile(new URL('../../.env.example', import.meta.url), 'utf8');
    const lines = text.split('\n');
    for (const { name, description } of ENV_VARS) {
      const index = lines.findIndex((l) => l.startsWith(`${name}=`));
      expect(index, name).toBeGreaterThan(0);
      // Exact: the comment is the description the code documents, so the two cannot drift.
      expect(lines[index - 1], name).toBe(`# ${description}`);
      if (SECRET_ENV_NAMES.includes(name)) expect(lines[index], name).toBe(`${name}=`);
    }
    // Nothing it says may be false: unset BATON_HTTP_PORT picks a free port; no run reads ANTHROPIC_API_KEY.
    expect(text).not.toMatch(/unset: none|API-key mode/);
  });
});
