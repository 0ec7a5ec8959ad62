/**
 * The world of a Slack / Discord (and mixed-platform) end-to-end test: `baton start` as a user
 * starts it, a temp git repo inside the one workspace root, and a fake `codex` on PATH
 * (test/fakes/fake-codex-chat.mjs, linked as `codex`) so the tests exercise the platforms, not
 * the CLI. Each test brings its fake platform servers and the env that points baton at them.
 */
import { symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeClaudeConfigDir } from './claude-home.js';
import { makeCodexHome } from './codex-home.js';
import { makeTestHome } from './home.js';
import { startService, type ServiceProcess } from './service.js';

/** The chat fake codex script. */
export const FAKE_CHAT_CODEX = fileURLToPath(new URL('../fakes/fake-codex-chat.mjs', import.meta.url));
/** Upper bound of every wait in these tests, in ms: a bound on a condition polled for, not a
 * speed target (a loaded 2-core machine runs a real CLI many times slower; telegram-e2e waits 60 s too). */
export const WAIT_MS = 60_000;

/** Trust of one platform: `[channels.X]` owner and guests. */
export interface ChannelTrustToml {
  owner: string;
  guests?: string[];
}

/** Options of {@link startChatE2E}. */
export interface ChatE2EOptions {
  /** `[channels.*]` tables to write. */
  trust: Partial<Record<'telegram' | 'slack' | 'discord', ChannelTrustToml>>;
  /** Platform variables (tokens, API URLs, ports). */
  env: Record<string, string>;
  /**
   * Run the real codex (its bin dir first on PATH) against a fake Responses API at `openaiUrl`,
   * instead of the fake codex. @default the fake codex
   */
  realCodex?: { binDirs: string[]; openaiUrl: string };
  /**
   * Put the real claude's bin dir on PATH and point it at a fake Anthropic server at
   * `anthropicUrl` (`claude_config_dir` in the config). @default no claude
   */
  claude?: { binDir: string; anthropicUrl: string };
  /** More lines of the `[harness]` table, e.g. `inactivity_minutes = 1`. @default none */
  harnessToml?: string;
  /** Last changes to the service's environment (e.g. `DATABASE_URL` through a proxy). @default none */
  adjustEnv?: (env: Record<string, string>) => Record<string, string>;
  /** More tables of config.toml after the others, e.g. `[voice]`. @default none */
  extraToml?: string;
  /** Lines of `$BATON_HOME/.env`, written before the service starts. @default no file */
  dotEnv?: Record<string, string>;
}

/** A running world. */
export interface ChatE2E {
  service: ServiceProcess;
  dir: string;
  repo: string;
  batonHome: string;
  /** SIGKILLs the service (a crash) and starts it again with the same home, database and env. */
  crashAndRestart(): Promise<void>;
  dispose(): Promise<void>;
}

/** A TCP port free on 127.0.0.1 right now (for a listener baton opens itself). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Writes the config, links the fake codex and starts `baton start`; resolves once it is ready. */
export async function startChatE2E(options: ChatE2EOptions): Promise<ChatE2E> {
  const base = await makeTestHome('baton-chat-e2e-', [
    ...(options.realCodex?.binDirs ?? []),
    ...(options.claude ? [options.claude.binDir] : []),
  ]);
  const { dir, root, repo, batonHome, bin } = base;
  if (options.realCodex) await makeCodexHome(join(dir, 'codex-home'), options.realCodex.openaiUrl);
  else await symlink(FAKE_CHAT_CODEX, join(bin, 'codex'));
  const claudeDir = options.claude
    ? await makeClaudeConfigDir(join(dir, 'claude-config'), options.claude.anthropicUrl)
    : undefined;

  const trust = Object.entries(options.trust).flatMap(([platform, t]) => [
    `[channels.${platform}]`,
    `owner_user_id = ${JSON.stringify(t.owner)}`,
    `allowed_user_ids = ${JSON.stringify(t.guests ?? [])}`,
  ]);
  await writeFile(
    join(batonHome, 'config.toml'),
    [
      '[harness]',
      'approved = true',
      `codex_home = ${JSON.stringify(join(dir, 'codex-home'))}`,
      // The fake codex speaks `codex exec --json` only; the real one runs through the default app-server.
      ...(options.realCodex ? [] : ['codex_transport = "exec"']),
      ...(claudeDir ? [`claude_config_dir = ${JSON.stringify(claudeDir)}`] : []),
      ...(options.harnessToml ? [options.harnessToml] : []),
      '[workspace]',
      `roots = [${JSON.stringify(root)}]`,
      `default = ${JSON.stringify(repo)}`,
      ...trust,
      options.extraToml ?? '',
      '',
    ].join('\n'),
  );

  const built: Record<string, string> = { ...base.env, BATON_LOG_LEVEL: 'debug', ...options.env };
  const env = options.adjustEnv ? options.adjustEnv(built) : built;
  if (options.dotEnv)
    await writeFile(
      join(batonHome, '.env'),
      Object.entries(options.dotEnv)
        .map(([name, value]) => `${name}=${value}\n`)
        .join(''),
      { mode: 0o600 },
    );
  let service = await startService(env);
  return {
    get service() {
      return service;
    },
    crashAndRestart: async () => {
      await service.kill();
      service = await startService(env);
    },
    dir,
    repo,
    batonHome,
    dispose: async () => {
      await service.stop();
      await base.dispose();
    },
  };
}

/** The `hr_…` id in a `[run …]` message. */
export const runIdOf = (text: string): string => {
  const match = /\[run (hr_[0-9a-f]{12})\]/.exec(text);
  if (!match) throw new Error(`no [run …] tag in ${JSON.stringify(text)}`);
  return match[1]!;
};
