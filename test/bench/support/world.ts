/**
 * A bench world: fake chat platforms, fake model servers, temp repos inside one workspace root, and
 * `baton start` run from `dist/` as a user runs it (test/support/service.ts). Like
 * test/support/telegram-e2e.ts, plus what benchmarks need: a choice of database engine, several
 * repos (several worktrees, so `max_active` can be reached), an optional {@link TelegramTap} between
 * baton and the fake Bot API, Slack and Discord fakes, and timed starts.
 */
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { Update } from 'grammy/types';
import { startFakeAnthropic, type FakeAnthropic } from '../../fakes/fake-anthropic.js';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../../fakes/fake-discord.js';
import { startFakeOpenAI, type FakeOpenAI } from '../../fakes/fake-openai.js';
import { startFakeSlack, type FakeSlack } from '../../fakes/fake-slack.js';
import { startFakeTelegram, type FakeTelegram } from '../../fakes/fake-telegram.js';
import { makeClaudeConfigDir } from '../../support/claude-home.js';
import { makeCodexHome } from '../../support/codex-home.js';
import { createPostgresDatabase } from '../../support/database.js';
import { startService, type ServiceProcess } from '../../support/service.js';
import { startTelegramTap, type TelegramTap } from './telegram-tap.js';

export const TELEGRAM_TOKEN = '123456:BENCH-token-for-the-fake-bot-api-only';
export const SLACK_BOT_TOKEN = 'xoxb-benchfake';
export const SLACK_APP_TOKEN = 'xapp-bench-fake-app-token';
export const DISCORD_TOKEN = 'bench.fake-discord-token.only';
/** Telegram user id of the owner. */
export const OWNER = 111;
export const SLACK_OWNER = 'UBENCHOWNER';
export const DISCORD_OWNER = discordUser('100000000000000001', 'owner');

/** Database engine of a world. */
export type Engine = 'pglite' | 'postgres';

/** Options of {@link startBenchWorld}. */
export interface BenchWorldOptions {
  /** PATH entries put first (the pinned CLIs' bin dirs, or a fake codex's). */
  binDirs: string[];
  engine: Engine;
  /** Extra `[harness]` lines. */
  harnessToml?: string[];
  /** Repos created under the workspace root; the first is the default; each is also a project alias. @default ['repo'] */
  repos?: string[];
  /** Put a {@link TelegramTap} between baton and the fake Bot API. @default false */
  tap?: boolean;
  /** Also connect Slack (Socket Mode) and Discord (gateway) to their fakes. @default false */
  allChannels?: boolean;
  /** Start the service now. @default true */
  start?: boolean;
  /** `BATON_LOG_LEVEL`. @default 'info' */
  logLevel?: string;
}

/** A running world. */
export interface BenchWorld {
  telegram: FakeTelegram;
  tap: TelegramTap | undefined;
  openai: FakeOpenAI;
  anthropic: FakeAnthropic;
  slack: FakeSlack | undefined;
  discord: FakeDiscord | undefined;
  /** The service; throws before the first start. */
  readonly service: ServiceProcess;
  env: Record<string, string>;
  dir: string;
  home: string;
  root: string;
  /** Repo name → absolute path. */
  repos: Record<string, string>;
  batonHome: string;
  codexHome: string;
  claudeConfigDir: string;
  /** URL of the world's own PostgreSQL database, when the engine is postgres. */
  databaseUrl: string | undefined;
  /** Starts `baton start`; resolves with the ms from spawn to the `baton ready` line. */
  start(): Promise<number>;
  /** SIGTERM and wait for exit. */
  stop(): Promise<void>;
  /** SIGKILL (a crash), then start again; resolves with the restart's ms to ready. */
  crashAndRestart(): Promise<number>;
  /** Queues a private-chat text message from the owner; returns its `update_id`. */
  pushOwnerMessage(text: string, messageId: number): number;
  dispose(): Promise<void>;
}

/** The admin URL of the PostgreSQL server, or an error naming what to set. */
export function postgresAdminUrl(): string {
  const url = process.env.DATABASE_URL;
  if (!url)
    throw new Error(
      'PostgreSQL scenarios need DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test), as CI sets it',
    );
  return url;
}

export async function startBenchWorld(options: BenchWorldOptions): Promise<BenchWorld> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-bench-'));
  const home = join(dir, 'home');
  const root = join(dir, 'work');
  const batonHome = join(dir, 'baton-home');
  const repoNames = options.repos ?? ['repo'];
  const repos: Record<string, string> = {};
  for (const name of repoNames) {
    repos[name] = join(root, name);
    await mkdir(repos[name], { recursive: true });
    await execa('git', ['init', '-q', repos[name]]);
  }
  await mkdir(home, { recursive: true });
  await mkdir(batonHome, { recursive: true });

  const telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
  const tap = options.tap ? await startTelegramTap(telegram.url) : undefined;
  const openai = await startFakeOpenAI();
  const anthropic = await startFakeAnthropic();
  const codexHome = await makeCodexHome(join(dir, 'codex-home'), openai.url);
  const claudeConfigDir = await makeClaudeConfigDir(join(dir, 'claude-config'), anthropic.url);
  const slack = options.allChannels
    ? await startFakeSlack({ botToken: SLACK_BOT_TOKEN, appToken: SLACK_APP_TOKEN })
    : undefined;
  const discord = options.allChannels ? await startFakeDiscord({ token: DISCORD_TOKEN }) : undefined;

  const firstRepo = repos[repoNames[0]!]!;
  await writeFile(
    join(batonHome, 'config.toml'),
    [
      '[harness]',
      'approved = true',
      `codex_home = ${JSON.stringify(codexHome)}`,
      `claude_config_dir = ${JSON.stringify(claudeConfigDir)}`,
      ...(options.harnessToml ?? []),
      '[workspace]',
      `roots = [${JSON.stringify(root)}]`,
      `default = ${JSON.stringify(firstRepo)}`,
      '[projects]',
      ...repoNames.map((name) => `${name} = ${JSON.stringify(repos[name])}`),
      '[channels.telegram]',
      `owner_user_id = "${OWNER}"`,
      ...(options.allChannels
        ? [
            '[channels.slack]',
            `owner_user_id = "${SLACK_OWNER}"`,
            '[channels.discord]',
            `owner_user_id = "${DISCORD_OWNER.id}"`,
          ]
        : []),
      '',
    ].join('\n'),
  );

  const env: Record<string, string> = {
    HOME: home,
    PATH: [...options.binDirs, process.env.PATH ?? '/usr/bin:/bin'].join(':'),
    USER: process.env.USER ?? userInfo().username,
    BATON_HOME: batonHome,
    BATON_LOG_LEVEL: options.logLevel ?? 'info',
    TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
    TELEGRAM_API_ROOT: tap?.url ?? telegram.url,
  };
  if (slack) Object.assign(env, { SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_URL: slack.url });
  if (discord) Object.assign(env, { DISCORD_BOT_TOKEN: DISCORD_TOKEN, DISCORD_API_URL: discord.url });
  let dropDatabase: (() => Promise<void>) | undefined;
  let databaseUrl: string | undefined;
  if (options.engine === 'postgres') {
    const created = await createPostgresDatabase(postgresAdminUrl());
    env.DATABASE_URL = databaseUrl = created.url;
    dropDatabase = created.drop;
  }

  let service: ServiceProcess | undefined;
  let nextUpdateId = 500_000;
  const start = async (): Promise<number> => {
    const t0 = performance.now();
    service = await startService(env);
    return performance.now() - t0;
  };
  if (options.start ?? true) await start();

  return {
    telegram,
    tap,
    openai,
    anthropic,
    slack,
    discord,
    get service() {
      if (!service) throw new Error('the service was not started');
      return service;
    },
    env,
    dir,
    home,
    root,
    repos,
    batonHome,
    codexHome,
    claudeConfigDir,
    databaseUrl,
    start,
    stop: async () => {
      await service?.stop();
      service = undefined;
    },
    crashAndRestart: async () => {
      await service?.kill();
      return start();
    },
    pushOwnerMessage: (text, messageId) => {
      const update = {
        update_id: nextUpdateId++,
        message: {
          message_id: messageId,
          date: Math.floor(Date.now() / 1000),
          chat: { id: OWNER, type: 'private', first_name: 'owner' },
          from: { id: OWNER, is_bot: false, first_name: 'owner' },
          text,
          ...(text.startsWith('/')
            ? { entities: [{ type: 'bot_command' as const, offset: 0, length: text.split(' ')[0]!.length }] }
            : {}),
        },
      } as Update;
      return telegram.pushUpdate(update);
    },
    dispose: async () => {
      // Everything is released even when one step fails; the first failure is rethrown.
      const steps: (() => Promise<unknown> | undefined)[] = [
        () => service?.stop(),
        () => tap?.close(),
        () => telegram.close(),
        () => openai.close(),
        () => anthropic.close(),
        () => slack?.close(),
        () => discord?.close(),
        () => dropDatabase?.(),
        () => rm(dir, { recursive: true, force: true }),
      ];
      let failure: unknown;
      for (const step of steps) {
        try {
          await step();
        } catch (err) {
          failure ??= err;
        }
      }
      if (failure !== undefined) throw failure;
    },
  };
}

/** The `hr_…` id in a `[run …]` message, or undefined. */
export function runIdIn(text: string): string | undefined {
  return /\[run (hr_[0-9a-f]{12})\]/.exec(text)?.[1];
}

/** `reply_parameters.message_id` of a sent message. */
export function replyTargetOf(body: { [field: string]: unknown }): number | undefined {
  return (body['reply_parameters'] as { message_id?: number } | undefined)?.message_id;
}

/** Terminal words of an outcome message: `[run hr_…] completed …`. */
export const TERMINAL_PATTERN = /^\[run hr_[0-9a-f]{12}\] (completed|failed|blocked|cancelled|interrupted)\b/;

/** Waits until `predicate` holds, polling every `everyMs`. @throws Error after `timeoutMs`. */
export async function waitUntil(
  predicate: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
  everyMs = 20,
): Promise<void> {
  const end = performance.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (performance.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
