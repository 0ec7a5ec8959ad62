import { chmod, mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigToml } from '../../src/config/index.js';
import { BatonError } from '../../src/core/errors.js';
import {
  claudeLoginState,
  codexLoginState,
  collectDoctorReport,
  doctorJsonValue,
  exitCode,
  formatDoctorTable,
  toDoctorJson,
  type DoctorReport,
  type DoctorRow,
  type DoctorSources,
} from '../../src/doctor/index.js';

const SECRETS = {
  idToken: 'idt-SECRET-a1',
  accessToken: 'at-SECRET-b2',
  refreshToken: 'rt-SECRET-c3',
  apiKey: 'sk-SECRET-d4',
  claudeAccess: 'sk-ant-oat-SECRET-e5',
  claudeRefresh: 'sk-ant-ort-SECRET-f6',
  dbPassword: 'pw-SECRET-g7',
};
const CHATGPT_AUTH = {
  auth_mode: 'chatgpt',
  OPENAI_API_KEY: null,
  tokens: {
    id_token: SECRETS.idToken,
    access_token: SECRETS.accessToken,
    refresh_token: SECRETS.refreshToken,
    account_id: 'acct-1',
  },
  last_refresh: '2025-01-01T00:00:00Z',
};
const APIKEY_AUTH = { auth_mode: 'apikey', OPENAI_API_KEY: SECRETS.apiKey };
const CLAUDE_CREDENTIALS = {
  claudeAiOauth: { accessToken: SECRETS.claudeAccess, refreshToken: SECRETS.claudeRefresh, expiresAt: 1 },
};
// max_active = 1: with the ChatGPT login of the healthy machine, more would share CODEX_HOME.
const HEALTHY_TOML =
  '[harness]\napproved = true\nmax_active = 1\nmin_free_gb = 0.0001\n\n[workspace]\nroots = ["~/code"]\n';

let root: string;
let home: string;
let batonHome: string;
let binDir: string;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-doctor-')));
  home = path.join(root, 'home');
  batonHome = path.join(home, '.baton');
  binDir = path.join(root, 'bin');
  await mkdir(batonHome, { recursive: true });
  await mkdir(binDir);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** An executable that prints `versionLine` for `--version`, like the real CLIs. */
async function fakeCli(name: string, versionLine: string): Promise<string> {
  const file = path.join(binDir, name);
  await writeFile(file, `#!/bin/sh\necho '${versionLine}'\n`);
  await chmod(file, 0o755);
  return file;
}

async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value), { mode: 0o600 });
}

/** A machine where everything is fine: both CLIs, both logged in, Telegram connected. */
async function healthyMachine(): Promise<void> {
  await fakeCli('codex', 'codex-cli 0.171.0');
  await fakeCli('claude', '2.1.197 (Claude Code)');
  await writeJson(path.join(home, '.codex', 'auth.json'), CHATGPT_AUTH);
  await writeJson(path.join(home, '.claude', '.credentials.json'), CLAUDE_CREDENTIALS);
  await mkdir(path.join(home, 'code'), { recursive: true }); // the workspace root exists
}

function sources(overrides: Partial<DoctorSources> & { toml?: string } = {}): DoctorSources {
  const { toml = HEALTHY_TOML, ...rest } = overrides;
  const configPath = path.join(batonHome, 'config.toml');
  return {
    now: new Date('2025-06-01T12:00:00Z'),
    homeDir: home,
    batonHome,
    config: {
      path: configPath,
      result: { config: parseConfigToml(toml, { configPath, homeDir: home }), exists: true },
    },
    env: { PATH: binDir },
    database: {
      kind: { engine: 'pglite', dataDir: path.join(batonHome, 'pgdata') },
      migrationsCurrent: true,
      counts: { active: 1, pendingDeliveries: 0, deadLetters: 0 },
    },
    channels: {
      telegram: { configured: true, state: { state: 'connected' } },
      slack: { configured: false, reason: 'SLACK_BOT_TOKEN unset' },
      discord: { configured: false, reason: 'DISCORD_BOT_TOKEN unset' },
    },
    ...rest,
  };
}

function row(report: DoctorReport, area: string): DoctorRow {
  const found = report.rows.find((r) => r.area === area);
  if (found === undefined) throw new Error(`no ${area} row`);
  return found;
}

describe('codex login state (CODEX_HOME/auth.json)', () => {
  it.each([
    ['a ChatGPT login with a refresh token', CHATGPT_AUTH, { state: 'authenticated', method: 'chatgpt' }],
    ['the API-key form', APIKEY_AUTH, { state: 'authenticated', method: 'api_key' }],
    [
      'tokens without a refresh token',
      { ...CHATGPT_AUTH, tokens: { access_token: SECRETS.accessToken } },
      { state: 'not_authenticated' },
    ],
    ['malformed JSON quoting a key', `{"OPENAI_API_KEY": "${SECRETS.apiKey}", oops`, { state: 'not_authenticated' }],
    ['a JSON array', '[]', { state: 'not_authenticated' }],
  ])('%s', async (_name, auth, expected) => {
    const codexHome = path.join(root, 'codex');
    await writeJson(path.join(codexHome, 'auth.json'), auth);
    const state = await codexLoginState(codexHome);
    expect(state).toMatchObject(expected);
    for (const secret of Object.values(SECRETS)) expect(state.detail).not.toContain(secret);
  });

  it.each([
    [
      'a provider with its key in experimental_bearer_token',
      'experimental_bearer_token = "sk-provider-secret"',
      { state: 'authenticated', method: 'model_provider' },
    ],
    ['a provider that asks for no key', '', { state: 'authenticated', method: 'model_provider' }],
    [
      'a provider whose key comes from an environment variable runs never get',
      'env_key = "PROVIDER_KEY"',
      { state: 'not_authenticated' },
    ],
  ])('understands a custom model_provider in config.toml: %s', async (_name, keyLine, expected) => {
    const codexHome = path.join(root, 'codex-provider');
    await mkdir(codexHome, { recursive: true });
    await writeFile(
      path.join(codexHome, 'config.toml'),
      [
        'model_provider = "corp"',
        '',
        '[model_providers.corp]',
        'name = "corp"',
        'base_url = "https://llm.example/v1"',
        keyLine,
        '',
      ].join('\n'),
    );
    const state = await codexLoginState(codexHome);
    expect(state).toMatchObject(expected);
    expect(state.detail).toContain('model provider "corp"');
    expect(state.detail).not.toContain('sk-provider-secret');
  });

  it('uses auth.json when the provider is openai or requires OpenAI auth', async () => {
    const codexHome = path.join(root, 'codex-openai');
    await mkdir(codexHome, { recursive: true });
    await writeFile(
      path.join(codexHome, 'config.toml'),
      'model_provider = "corp"\n[model_providers.corp]\nrequires_openai_auth = true\n',
    );
    await expect(codexLoginState(codexHome)).resolves.toMatchObject({ state: 'not_authenticated' });
  });

  it('is not authenticated without auth.json, and says how to log in', async () => {
    const state = await codexLoginState(path.join(root, 'nowhere'));
    expect(state).toMatchObject({ state: 'not_authenticated' });
    expect(state.detail).toContain('codex login');
  });
});

describe('claude login state (CLAUDE_CONFIG_DIR)', () => {
  it('is authenticated with .credentials.json', async () => {
    const dir = path.join(root, 'claude');
    await writeJson(path.join(dir, '.credentials.json'), CLAUDE_CREDENTIALS);
    await expect(claudeLoginState(dir)).resolves.toMatchObject({ state: 'authenticated', method: 'credentials_file' });
  });

  it('is unverified with only the directory (keychain or API key)', async () => {
    const dir = path.join(root, 'claude');
    await mkdir(dir);
    await expect(claudeLoginState(dir)).resolves.toMatchObject({ state: 'unverified' });
  });

  it('mentions a keychain only on macOS; elsewhere it says how to log in', async () => {
    const dir = path.join(root, 'claude');
    await mkdir(dir);
    const linux = await claudeLoginState(dir, 'linux');
    expect(linux.detail).not.toMatch(/keychain/i);
    expect(linux.detail).toContain('log in');
    expect((await claudeLoginState(dir, 'darwin')).detail).toMatch(/macOS keychain/);
  });

  it('is not authenticated with nothing', async () => {
    await expect(claudeLoginState(path.join(root, 'nothing'))).resolves.toMatchObject({ state: 'not_authenticated' });
  });
});

describe('collectDoctorReport', () => {
  it('reports a healthy machine as ok in every row, exit 0', async () => {
    await healthyMachine();
    const report = await collectDoctorReport(sources());
    expect(report.rows.map((r) => r.area)).toEqual([
      'config',
      'database',
      'channel:telegram',
      'channel:slack',
      'channel:discord',
      'harness',
      'vendor:codex',
      'vendor:claude',
      'storage',
    ]);
    expect(report.rows.filter((r) => r.status !== 'ok')).toEqual([]);
    expect(exitCode(report)).toBe(0);
    expect(row(report, 'vendor:codex').facts).toMatchObject({
      path: path.join(binDir, 'codex'),
      version: 'codex-cli 0.171.0',
      login: 'authenticated',
      loginMethod: 'chatgpt',
    });
    expect(row(report, 'vendor:claude').facts).toMatchObject({
      version: '2.1.197 (Claude Code)',
      login: 'authenticated',
      home: path.join(home, '.claude'),
    });
    expect(row(report, 'database').facts).toMatchObject({ engine: 'pglite', activeRuns: 1, deadLetters: 0 });
  });

  it('warns that concurrent codex runs share CODEX_HOME with a ChatGPT login when max_active > 1, not with an API key', async () => {
    await healthyMachine();
    const shared = await collectDoctorReport(
      sources({ toml: HEALTHY_TOML.replace('max_active = 1', 'max_active = 3') }),
    );
    expect(row(shared, 'vendor:codex')).toMatchObject({ status: 'warn', facts: { sharedHomeRisk: true } });
    expect(row(shared, 'vendor:codex').details.join('\n')).toMatch(
      /max_active = 3 lets codex runs share .* ChatGPT login.*openai\/codex#10332/,
    );
    await writeJson(path.join(home, '.codex', 'auth.json'), APIKEY_AUTH);
    const apiKey = await collectDoctorReport(
      sources({ toml: HEALTHY_TOML.replace('max_active = 1', 'max_active = 3') }),
    );
    expect(row(apiKey, 'vendor:codex')).toMatchObject({ status: 'ok', facts: { sharedHomeRisk: false } });
  });

  it('lists per vendor the environment names each run gets, never values, and flags login- or billing-changing ones', async () => {
    await healthyMachine();
    const toml = HEALTHY_TOML.replace(
      '[harness]\n',
      '[harness]\npass_env = ["HTTPS_PROXY", "LANG", "ANTHROPIC_BASE_URL", "DATABASE_URL"]\n',
    );
    const passable = {
      HTTPS_PROXY: 'http://proxy-value:3128',
      LANG: 'C.UTF-8',
      ANTHROPIC_BASE_URL: 'http://gateway-value',
      DATABASE_URL: 'postgres://x',
    };
    const report = await collectDoctorReport(sources({ toml, env: { PATH: binDir, passable } }));
    const codex = row(report, 'vendor:codex');
    const claude = row(report, 'vendor:claude');
    expect(codex).toMatchObject({
      status: 'ok',
      facts: {
        childEnv: 'ANTHROPIC_BASE_URL BATON_RUN_ID CODEX_HOME HOME HTTPS_PROXY LANG PATH TERM USER',
        accountChangingEnv: '',
      },
    });
    expect(claude).toMatchObject({
      status: 'warn',
      facts: {
        childEnv: 'ANTHROPIC_BASE_URL BATON_RUN_ID CLAUDE_CONFIG_DIR HOME HTTPS_PROXY LANG PATH TERM USER',
        accountChangingEnv: 'ANTHROPIC_BASE_URL',
      },
    });
    expect(claude.details.join('\n')).toContain(
      'pass_env gives claude ANTHROPIC_BASE_URL, which changes its login, endpoint or billing',
    );
    const text = JSON.stringify(report);
    for (const value of Object.values(passable)) expect(text).not.toContain(value);
  });

  it('reads the vendor homes through the run resolver: config key, then env, then default', async () => {
    await healthyMachine();
    const fromConfig = path.join(root, 'codex-config');
    const fromEnv = path.join(root, 'codex-env');
    await writeJson(path.join(fromConfig, 'auth.json'), APIKEY_AUTH);
    await mkdir(fromEnv);
    const claudeEnv = path.join(root, 'claude-env');
    await mkdir(claudeEnv);
    const toml = HEALTHY_TOML.replace('[harness]\n', `[harness]\ncodex_home = "${fromConfig}"\n`);
    const report = await collectDoctorReport(
      sources({ toml, env: { PATH: binDir, CODEX_HOME: fromEnv, CLAUDE_CONFIG_DIR: claudeEnv } }),
    );
    expect(row(report, 'vendor:codex').facts).toMatchObject({
      home: fromConfig,
      login: 'authenticated',
      loginMethod: 'api_key',
    });
    expect(row(report, 'vendor:claude').facts).toMatchObject({ home: claudeEnv, login: 'unverified' });
  });

  it('exits non-zero when the artifact quota is breached', async () => {
    await healthyMachine();
    const runDir = path.join(batonHome, 'harness', 'runs', 'hr_0123456789ab');
    await mkdir(runDir, { recursive: true });
    await writeFile(path.join(runDir, 'events.jsonl'), 'x'.repeat(4096));
    const report = await collectDoctorReport(
      sources({ toml: HEALTHY_TOML.replace('min_free_gb = 0.0001', 'artifact_quota_gb = 0.000001') }),
    );
    expect(row(report, 'storage')).toMatchObject({
      status: 'fail',
      facts: { artifactBytes: 4096, quotaBreached: true },
    });
    expect(exitCode(report)).toBe(1);
  });

  it('exits non-zero when the database is unusable, without printing its password', async () => {
    await healthyMachine();
    const url = `postgres://baton:${SECRETS.dbPassword}@db.internal:5432/baton`;
    const report = await collectDoctorReport(
      sources({ database: { error: `Cannot reach PostgreSQL at ${url}` }, secrets: [url, SECRETS.dbPassword] }),
    );
    expect(row(report, 'database').status).toBe('fail');
    expect(exitCode(report)).toBe(1);
    expect(toDoctorJson(report)).not.toContain(SECRETS.dbPassword);
  });

  it('warns with chmod 600 when $BATON_HOME/.env holding a token is readable by group or others', async () => {
    await healthyMachine();
    const envPath = path.join(batonHome, '.env');
    await mkdir(batonHome, { recursive: true });
    await writeFile(envPath, `TELEGRAM_BOT_TOKEN=${SECRETS.apiKey}\n`);
    await chmod(envPath, 0o644);
    const loose = row(
      await collectDoctorReport(sources({ config: { ...sources().config, envFile: { path: envPath, loaded: true } } })),
      'config',
    );
    expect(loose.status).toBe('warn');
    expect(loose.details.join('\n')).toContain(`chmod 600 ${envPath}`);
    expect(JSON.stringify(loose)).not.toContain(SECRETS.apiKey);
    await chmod(envPath, 0o600);
    const tight = row(
      await collectDoctorReport(sources({ config: { ...sources().config, envFile: { path: envPath, loaded: true } } })),
      'config',
    );
    expect(tight.status).toBe('ok');
    await writeFile(envPath, 'BATON_LOG_LEVEL=debug\n');
    await chmod(envPath, 0o644);
    const noSecret = row(
      await collectDoctorReport(sources({ config: { ...sources().config, envFile: { path: envPath, loaded: true } } })),
      'config',
    );
    expect(noSecret.status).toBe('ok');
  });

  it('fails the config row but exits 0 when config.toml does not load, using defaults elsewhere', async () => {
    await healthyMachine();
    const error = new BatonError(
      'config_invalid',
      'Invalid configuration in /x/config.toml:\n  [harness].bogus: unknown key\nFix this key, then restart baton.',
    );
    const report = await collectDoctorReport(
      sources({ config: { path: path.join(batonHome, 'config.toml'), result: { error } } }),
    );
    expect(row(report, 'config')).toMatchObject({
      status: 'fail',
      summary: 'Invalid configuration in /x/config.toml:',
      facts: { errorCode: 'config_invalid' },
    });
    expect(row(report, 'harness').facts).toMatchObject({ approved: false });
    expect(exitCode(report)).toBe(0);
  });

  it('warns about a missing CLI, no login, no consent and no channel, but exits 0', async () => {
    const report = await collectDoctorReport(
      sources({
        toml: '[harness]\nmin_free_gb = 0\n',
        channels: { telegram: { configured: false }, slack: { configured: false }, discord: { configured: false } },
      }),
    );
    expect(row(report, 'vendor:codex')).toMatchObject({
      status: 'warn',
      facts: { path: null, login: 'not_authenticated' },
    });
    expect(row(report, 'harness').status).toBe('warn');
    expect(row(report, 'harness').details.join('\n')).toMatch(/baton approve[\s\S]*baton grant path/);
    expect(row(report, 'channel:telegram').status).toBe('warn');
    expect(row(report, 'storage')).toMatchObject({ status: 'ok', facts: { freeBytes: null, minFreeBytes: 0 } });
    expect(exitCode(report)).toBe(0);
  });

  it('says to restart when the CLIs on PATH differ from those the service found at start', async () => {
    await healthyMachine();
    const report = await collectDoctorReport(
      sources({
        startedWith: [
          { vendor: 'codex', found: { binaryPath: '/old/codex', version: 'codex-cli 0.170.0' } },
          { vendor: 'claude', missing: 'claude not found on PATH' },
        ],
      }),
    );
    expect(row(report, 'vendor:codex')).toMatchObject({ status: 'warn', facts: { restartNeeded: true } });
    expect(row(report, 'vendor:claude')).toMatchObject({ status: 'warn', facts: { restartNeeded: true } });
    expect(row(report, 'harness').details).toContain('restart baton to pick up codex, claude');
    const same = await collectDoctorReport(
      sources({
        startedWith: [
          { vendor: 'codex', found: { binaryPath: path.join(binDir, 'codex'), version: 'codex-cli 0.171.0' } },
          { vendor: 'claude', found: { binaryPath: path.join(binDir, 'claude'), version: '2.1.197 (Claude Code)' } },
        ],
      }),
    );
    expect(row(same, 'vendor:codex').facts.restartNeeded).toBe(false);
    expect(row(same, 'harness').status).toBe('ok');
  });

  it('says what runs lack when no cgroup can be made for them, and that the installed unit lacks Delegate=yes', async () => {
    await healthyMachine();
    const unitFile = path.join(home, '.config', 'systemd', 'user', 'baton.service');
    const report = await collectDoctorReport(
      sources({
        runCgroups: {
          support: { unavailable: 'cannot create a cgroup here (EACCES)' },
          unit: { path: unitFile, user: true, delegate: false },
        },
      }),
    );
    const harness = row(report, 'harness');
    expect(harness.status).toBe('warn');
    expect(harness.facts).toMatchObject({ runCgroup: false });
    const text = harness.details.join('\n');
    expect(text).toMatch(/process tree.*cannot create a cgroup here \(EACCES\)/);
    expect(text).toContain(`${unitFile} has no Delegate=yes`);
    expect(text).toContain('baton service install --user');
    // With a cgroup there is nothing to say.
    const fine = await collectDoctorReport(sources({ runCgroups: { support: { parent: '/sys/fs/cgroup/x' } } }));
    expect(row(fine, 'harness')).toMatchObject({ status: 'ok', facts: { runCgroup: true } });
  });

  it('warns, with usage, when free space cannot be probed', async () => {
    await healthyMachine();
    const report = await collectDoctorReport(
      sources({
        measureStorage: (_dir, probeFree) =>
          probeFree
            ? Promise.reject(new BatonError('storage_unprobeable', 'Cannot read the free space of /x.'))
            : Promise.resolve({ artifactBytes: 10, freeBytes: undefined }),
      }),
    );
    expect(row(report, 'storage')).toMatchObject({
      status: 'warn',
      details: ['Cannot read the free space of /x.'],
      facts: { artifactBytes: 10, freeBytes: null },
    });
    expect(exitCode(report)).toBe(0);
  });
});

describe('formatting', () => {
  it('toDoctorJson round-trips through JSON.parse', async () => {
    await healthyMachine();
    const report = await collectDoctorReport(sources());
    const parsed: unknown = JSON.parse(toDoctorJson(report));
    expect(parsed).toEqual(doctorJsonValue(report));
    expect(parsed).toMatchObject({
      schema: 'baton.doctor/1',
      generatedAt: '2025-06-01T12:00:00.000Z',
      status: 'ok',
      exitCode: 0,
    });
    expect(JSON.parse(toDoctorJson(report, 0))).toEqual(parsed);
  });

  it('aligns the table columns', async () => {
    await healthyMachine();
    const table = formatDoctorTable(await collectDoctorReport(sources()));
    const lines = table.split('\n');
    expect(lines[0]).toMatch(/^AREA +STATUS +SUMMARY$/);
    const statusColumn = lines[0]?.indexOf('STATUS');
    for (const line of lines.slice(1).filter((l) => /^(config|database|channel|harness|vendor|storage)/.test(l))) {
      expect(line.slice(statusColumn).split(' ')[0]).toMatch(/^(ok|warn|fail)$/);
    }
    expect(lines.at(-1)).toMatch(/^result: ok \(0 fail, 0 warn\) · exit 0/);
  });

  it('never shows a token or key, in the table or the JSON', async () => {
    await healthyMachine();
    await writeJson(path.join(root, 'apikey-home', 'auth.json'), APIKEY_AUTH);
    const reports = [
      await collectDoctorReport(sources()),
      await collectDoctorReport(sources({ env: { PATH: binDir, CODEX_HOME: path.join(root, 'apikey-home') } })),
    ];
    await writeJson(path.join(home, '.codex', 'auth.json'), `{"tokens": {"refresh_token": "${SECRETS.refreshToken}"`);
    reports.push(await collectDoctorReport(sources()));
    for (const report of reports) {
      const text = `${formatDoctorTable(report)}\n${toDoctorJson(report)}`;
      for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    }
    expect(row(reports[2] as DoctorReport, 'vendor:codex').facts.login).toBe('not_authenticated');
  });
});
