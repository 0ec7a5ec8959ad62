/**
 * The world of a Telegram end-to-end test: a fake Bot API server, fake model servers for both
 * vendors, a temp git repo inside the one workspace root, and `baton start` running as a user
 * starts it, with the pinned CLIs first on its PATH.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Update } from 'grammy/types';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { startFakeTelegram, type FakeTelegram, type SendMessageBody } from '../fakes/fake-telegram.js';
import { makeClaudeConfigDir } from './claude-home.js';
import { makeCodexHome } from './codex-home.js';
import { makeTestHome } from './home.js';
import { startService, type ServiceProcess } from './service.js';

export const TOKEN = '123456:TEST-token-for-the-fake-bot-api-only';
export const CANARY = 'canary-secret-must-not-reach-children';
export const OWNER = 111;
export const GUEST = 222;
export const STRANGER = 333;
export const WAIT_MS = 60_000;

/** A running end-to-end world. */
export interface TelegramE2E {
  telegram: FakeTelegram;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  service: ServiceProcess;
  dir: string;
  /** The one workspace root (holds {@link repo}). */
  root: string;
  repo: string;
  batonHome: string;
  /** A private-chat text message from `userId`, optionally replying to a message the bot sent. */
  privateMessage(userId: number, text: string, messageId: number, replyTo?: SendMessageBody): Update;
  /** The environment the service runs with (for running other `baton` commands beside it). */
  env: Record<string, string>;
  /** Kills the service with SIGKILL (a crash) and starts it again with the same environment. */
  crashAndRestart(): Promise<void>;
  /** The vendor events baton spooled for a run. */
  eventsOf(runId: string): Promise<Record<string, unknown>[]>;
  dispose(): Promise<void>;
}

/** Options of {@link startTelegramE2E}. */
export interface TelegramE2EOptions {
  /** PATH entries put first (the pinned CLIs' bin dirs). */
  binDirs: string[];
  /** Extra `[harness]` lines. */
  harnessToml?: string;
  /**
   * Tables appended to config.toml after the others (e.g. `[voice]`), or a function of the repo's
   * path that returns them (e.g. a `[projects.NAME]` table for it). @default none
   */
  extraToml?: string | ((repo: string) => string);
  /** How claude is logged in: `subscription` makes it read the plan's rate-limit headers. @default 'api_key' */
  claudeAuth?: 'api_key' | 'subscription';
  /** Last changes to the service's environment (e.g. `DATABASE_URL` through a proxy). */
  adjustEnv?: (env: Record<string, string>) => Record<string, string>;
  /** Lines of `$BATON_HOME/.env`, written before the service starts. @default no file */
  dotEnv?: Record<string, string>;
}

/** Reply target (`reply_parameters.message_id`) of a sent message. */
export const replyTarget = (body: SendMessageBody): number | undefined =>
  (body.reply_parameters as { message_id?: number } | undefined)?.message_id;

/** The `hr_…` id in a `[run …]` message. */
export const runIdOf = (text: string): string => /\[run (hr_[0-9a-f]{12})\]/.exec(text)![1]!;

export async function startTelegramE2E(options: TelegramE2EOptions): Promise<TelegramE2E> {
  const base = await makeTestHome('baton-e2e-', options.binDirs);
  const { dir, root, repo, batonHome } = base;

  const telegram = await startFakeTelegram({ token: TOKEN });
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const codexHome = await makeCodexHome(join(dir, 'codex-home'), openai.url);
  const claudeDir = await makeClaudeConfigDir(join(dir, 'claude-config'), anthropic.url, {
    auth: options.claudeAuth ?? 'api_key',
  });
  await writeFile(
    join(batonHome, 'config.toml'),
    [
      '[harness]',
      'approved = true',
      `codex_home = ${JSON.stringify(codexHome)}`,
      `claude_config_dir = ${JSON.stringify(claudeDir)}`,
      options.harnessToml ?? '',
      '[workspace]',
      `roots = [${JSON.stringify(root)}]`,
      `default = ${JSON.stringify(repo)}`,
      '[channels.telegram]',
      `owner_user_id = "${OWNER}"`,
      `allowed_user_ids = ["${GUEST}"]`,
      typeof options.extraToml === 'function' ? options.extraToml(repo) : (options.extraToml ?? ''),
      '',
    ].join('\n'),
  );

  const plainEnv: Record<string, string> = {
    ...base.env,
    BATON_LOG_LEVEL: 'debug',
    TELEGRAM_BOT_TOKEN: TOKEN,
    TELEGRAM_API_ROOT: telegram.url,
    CANARY_SECRET: CANARY,
  };
  const env = options.adjustEnv ? options.adjustEnv(plainEnv) : plainEnv;
  if (options.dotEnv)
    await writeFile(
      join(batonHome, '.env'),
      Object.entries(options.dotEnv)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(''),
      { mode: 0o600 },
    );
  let service = await startService(env);
  let nextUpdateId = 900_000;

  return {
    telegram,
    openai,
    anthropic,
    env,
    get service() {
      return service;
    },
    crashAndRestart: async () => {
      await service.kill();
      service = await startService(env);
    },
    dir,
    root,
    repo,
    batonHome,
    privateMessage: (userId, text, messageId, replyTo) => {
      const replied = replyTo ? telegram.sentMessages[telegram.sent.indexOf(replyTo)] : undefined;
      // Above every id the fake handed out too (pushMessage), as Telegram's ids only grow.
      nextUpdateId = Math.max(nextUpdateId, telegram.lastUpdateId() + 1);
      return {
        update_id: nextUpdateId++,
        message: {
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: userId, type: 'private', first_name: `user${userId}` },
          from: { id: userId, is_bot: false, first_name: `user${userId}` },
          text,
          ...(replied ? { reply_to_message: replied } : {}),
          ...(text.startsWith('/')
            ? { entities: [{ type: 'bot_command' as const, offset: 0, length: text.split(' ')[0]!.length }] }
            : {}),
        },
      } as Update;
    },
    eventsOf: async (runId) =>
      (await readFile(join(batonHome, 'harness', 'runs', runId, 'events.jsonl'), 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    dispose: async () => {
      await service.stop();
      await telegram.close();
      await openai.close();
      await anthropic.close();
      await base.dispose();
    },
  };
}
