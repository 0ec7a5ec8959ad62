/**
 * No log line holds a secret baton knows, by value: a real grammY network error quotes the request
 * URL, bot token included, in a nested error's message and stack; SDKs and drivers put secrets in
 * messages, causes and URLs (percent-encoded there). The service logger's lines, to stdout and to
 * its file, are scrubbed of every value it was given.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Bot } from 'grammy';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, createServiceLogger } from '../../src/core/logger.js';
import { parseEnv, secretValues } from '../../src/config/env.js';

const TOKEN = '123456:canary-bot-token-7c1d';
const PASSWORD = 'canary"pw/7e2';

function capture(): { lines: string[]; destination: Writable } {
  const lines: string[] = [];
  return {
    lines,
    destination: new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }),
  };
}

/** A real grammY failure against a closed port: its nested FetchError quotes the token's URL. */
async function grammyNetworkError(): Promise<Error> {
  const bot = new Bot(TOKEN, { client: { apiRoot: 'http://127.0.0.1:9' } });
  return bot.api.getMe().then(
    () => {
      throw new Error('getMe should have failed');
    },
    (err: unknown) => err as Error,
  );
}

describe('secrets in log lines', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it('redacts every secret value wherever it sits: nested error, stack, cause, message, URL, any field', async () => {
    const err = await grammyNetworkError();
    expect(JSON.stringify({ inner: String((err as { error?: unknown }).error) })).toContain(TOKEN);
    const env = parseEnv({
      TELEGRAM_BOT_TOKEN: TOKEN,
      DATABASE_URL: `postgres://baton:${encodeURIComponent(PASSWORD)}@db.example:5432/baton`,
      SLACK_SIGNING_SECRET: 'canary-signing-9a',
    });
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', destination: destination as never, secrets: secretValues(env) });
    logger.error({ channel: 'telegram', err }, 'stored event handler failed');
    logger.warn(
      {
        err: new Error('outer', {
          cause: new Error(`connect to postgres://baton:${encodeURIComponent(PASSWORD)}@db.example failed`),
        }),
      },
      'db',
    );
    logger.info(
      {
        url: `https://hooks.example/?secret=${encodeURIComponent('canary-signing-9a')}`,
        nested: { deep: [`pw ${PASSWORD}`] },
      },
      `token ${TOKEN} in the message`,
    );
    expect(lines).toHaveLength(3);
    const all = lines.join('');
    for (const secret of [
      TOKEN,
      encodeURIComponent(TOKEN),
      PASSWORD,
      encodeURIComponent(PASSWORD),
      JSON.stringify(PASSWORD).slice(1, -1),
      'canary-signing-9a',
    ]) {
      expect(all).not.toContain(secret);
    }
    expect(lines[0]).toContain('stored event handler failed');
    expect(lines[0]).toContain('/bot[redacted]/getMe');
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
  });

  it('the service logger scrubs its file too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-log-secrets-'));
    dirs.push(dir);
    const service = await createServiceLogger('info', dir, [TOKEN]);
    service.logger.error({ err: await grammyNetworkError() }, 'stored event handler failed');
    await service.close();
    const text = await readFile(join(dir, 'current.log'), 'utf8');
    expect(text).toContain('stored event handler failed');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(encodeURIComponent(TOKEN));
  });
});

describe('secretValues', () => {
  it('holds every variable of kind secret, DATABASE_URL and its password (a new secret variable must be added)', async () => {
    const { ENV_VARS } = await import('../../src/config/env.js');
    const raw: Record<string, string> = { DATABASE_URL: 'postgres://u:canary-db-pw%2F1@h/d' };
    for (const v of ENV_VARS) if (v.kind === 'secret') raw[v.name] = `canary-${v.name.toLowerCase()}`;
    const values = secretValues(parseEnv(raw));
    for (const [name, value] of Object.entries(raw)) expect(values, name).toContain(value);
    expect(values).toContain('canary-db-pw/1');
  });
});

describe('a stored Telegram update whose handler failed', () => {
  it("is logged without the bot token grammY keeps in the error's context (ctx.api.token)", async () => {
    const bot = new Bot(TOKEN, {
      botInfo: {
        id: 1,
        is_bot: true,
        first_name: 'b',
        username: 'b_bot',
        can_join_groups: false,
        can_read_all_group_messages: false,
        supports_inline_queries: false,
        can_connect_to_business: false,
        has_main_web_app: false,
      } as never,
    });
    bot.use(() => {
      throw new Error('the database is away');
    });
    const update = {
      update_id: 1,
      message: {
        message_id: 1,
        date: 0,
        chat: { id: 5, type: 'private', first_name: 'u' },
        from: { id: 5, is_bot: false, first_name: 'u' },
        text: 'hi',
      },
    };
    const err = await bot.handleUpdate(update as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    const unscrubbed = capture();
    createLogger({ level: 'info', destination: unscrubbed.destination as never }).error(
      { channel: 'telegram', err },
      'stored event handler failed',
    );
    expect(unscrubbed.lines.join('')).toContain(TOKEN); // what every such line carried
    const { lines, destination } = capture();
    createLogger({ level: 'info', destination: destination as never, secrets: [TOKEN] }).error(
      { channel: 'telegram', err },
      'stored event handler failed',
    );
    expect(lines.join('')).toContain('stored event handler failed');
    expect(lines.join('')).not.toContain(TOKEN);
  });
});
