import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { DEFAULT_PASS_ENV } from '../../src/core/pass-env.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CONFIG_KEYS,
  CONFIG_TEMPLATE,
  configFileSchema,
  defaultConfigPath,
  ensureConfigFile,
  loadConfig,
  parseConfigToml,
} from '../../src/config/index.js';

/** PRODUCT.md §2's example, verbatim. */
const SPEC_EXAMPLE = `
[harness]
enabled = true                 # false removes the feature
approved = false               # one-time owner consent; set by \`baton approve\` or by hand; never by chat
default_vendor = "codex"       # "codex" | "claude"; anything else (even "") refuses start
max_active = 2                 # concurrent local runs, enforced atomically
default_timeout_minutes = 30   # wall clock; a run may ask up to 240
first_event_seconds = 120      # advisory notice when no vendor event yet
inactivity_minutes = 10        # advisory notice on silence; the run continues
prompt_argv_max_kb = 100       # no longer used (every task goes on stdin), still accepted
max_event_bytes = 1048576      # one vendor event
max_framing_errors = 20        # malformed lines before failed/protocol; 0 = zero tolerance
max_run_artifact_mb = 64       # events.jsonl spool cap; past it: truncate, flag, continue
artifact_quota_gb = 5          # whole store; breach refuses new runs
min_free_gb = 2                # free-disk floor; 0 disables the probe
artifact_retention_days = 30
delivery_max_attempts = 20
delivery_max_age_hours = 24
codex_home = "~/.codex"        # optional; else env CODEX_HOME; else vendor default
claude_config_dir = "~/.claude" # optional; else env CLAUDE_CONFIG_DIR; else vendor default

[workspace]
roots = ["~/code"]             # directories runs may use; \`baton grant path DIR\` appends
default = "~/code/app"         # optional default cwd

[projects]                     # optional aliases usable as in:NAME
app = "~/code/app"

[channels.telegram]            # likewise [channels.slack], [channels.discord]
owner_user_id = "123456789"
allowed_user_ids = ["987654321"]   # guests; the owner is always allowed
`;

const home = '/home/owner';
let dir: string;
let configPath: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'baton-config-'));
  configPath = path.join(dir, 'config.toml');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(toml: string) {
  await writeFile(configPath, toml);
  return loadConfig({ configPath, homeDir: home });
}

/** Parses `toml` expecting a refusal; returns the error for further checks. */
function refusal(toml: string): {
  message: string;
  details: { file: string; issues: { key: string; message: string }[] };
} {
  try {
    parseConfigToml(toml, { configPath, homeDir: home });
  } catch (err) {
    expect(err).toMatchObject({ code: 'config_invalid', details: { file: configPath } });
    return err as ReturnType<typeof refusal>;
  }
  throw new Error('expected config_invalid, nothing was thrown');
}

describe('loadConfig', () => {
  it("loads PRODUCT.md §2's example and resolves units and paths", async () => {
    const { config, exists, file } = await load(SPEC_EXAMPLE);
    expect(exists).toBe(true);
    expect(file).toBe(configPath);
    expect(config.harness).toEqual({
      enabled: true,
      approved: false,
      defaultVendor: 'codex',
      maxActive: 2,
      queue: true,
      maxQueued: 5,
      onQuota: 'queue',
      quotaWarnPercent: 80,
      defaultTimeoutMs: 30 * 60_000,
      defaultBudgetUsd: undefined,
      defaultMaxTurns: undefined,
      defaultMaxTokens: undefined,
      firstEventMs: 120_000,
      finishGraceMs: 10_000,
      passEnv: [...DEFAULT_PASS_ENV],
      inactivityMs: 10 * 60_000,
      approvalTimeoutMs: 10 * 60_000,
      maxAttachmentBytes: 20 * 1024 * 1024,
      maxImagePixels: 50_000_000,
      maxPatchBytes: 1024 * 1024,
      maxEventBytes: 1_048_576,
      maxFramingErrors: 20,
      maxRunArtifactBytes: 64 * 1024 * 1024,
      artifactQuotaBytes: 5 * 1024 ** 3,
      minFreeBytes: 2 * 1024 ** 3,
      artifactRetentionMs: 30 * 86_400_000,
      deliveryMaxAttempts: 20,
      deliveryMaxAgeMs: 24 * 3_600_000,
      pasteJoinMs: 1500,
      statusEditMs: 5_000,
      codexTransport: 'app-server',
      codexHome: '/home/owner/.codex',
      claudeConfigDir: '/home/owner/.claude',
    });
    expect(config.workspace).toEqual({
      roots: ['/home/owner/code'],
      defaultCwd: '/home/owner/code/app',
      worktrees: 'off',
      worktreeRetentionMs: 7 * 86_400_000,
    });
    expect([...config.projects]).toEqual([['app', '/home/owner/code/app']]);
    expect(config.channels.telegram).toEqual({ owner: '123456789', guests: ['987654321'] });
    expect(config.channels.slack).toEqual({ owner: undefined, guests: [] });
    expect(config.channels.discord).toEqual({ owner: undefined, guests: [] });
  });

  it('keeps an alias naming another node as NODE:PATH, for that node to resolve (issue #16 item 3)', async () => {
    const loaded = await load(
      '[projects]\nlib = "buildbox:~/code/lib"\nsrv = "ci-01:/srv/app"\nhere = "~/code/here"\n',
    );
    expect([...loaded.config.projects]).toEqual([
      ['lib', 'buildbox:~/code/lib'],
      ['srv', 'ci-01:/srv/app'],
      ['here', `${home}/code/here`],
    ]);
  });

  it('uses the defaults when the file does not exist', async () => {
    const loaded = await loadConfig({ configPath, homeDir: home });
    expect(loaded.exists).toBe(false);
    expect(loaded.config.harness).toMatchObject({
      enabled: true,
      approved: false,
      defaultVendor: 'codex',
      maxActive: 2,
    });
    expect(loaded.config.workspace).toEqual({
      roots: [],
      defaultCwd: undefined,
      worktrees: 'off',
      worktreeRetentionMs: 7 * 86_400_000,
    });
    expect(loaded.config.projects.size).toBe(0);
    expect(loaded.config.harness.codexHome).toBeUndefined();
  });

  it('refuses an unreadable file as config_unreadable naming it', async () => {
    await mkdir(configPath);
    const error = loadConfig({ configPath, homeDir: home });
    await expect(error).rejects.toMatchObject({ code: 'config_unreadable', details: { file: configPath } });
    await expect(error).rejects.toThrow(configPath);
  });

  it('reports a TOML syntax error with file, line and column', async () => {
    const error = load('[harness]\nenabled = true\nmax_active = = 3\n');
    await expect(error).rejects.toMatchObject({ code: 'config_invalid', details: { file: configPath, line: 3 } });
    await expect(error).rejects.toThrow(`${configPath}:3:`);
  });

  it('accepts an empty file and a UTF-8 byte order mark', async () => {
    await expect(load('')).resolves.toMatchObject({ exists: true });
    await expect(load('\uFEFF[harness]\nmax_active = 3\n')).resolves.toMatchObject({
      config: { harness: { maxActive: 3 } },
    });
  });
});

describe('unknown keys', () => {
  it.each([
    ['harness', '[harness]\nbogus = 1\n', 'harness.bogus', '[harness].bogus'],
    ['workspace', '[workspace]\nroot = ["/x"]\n', 'workspace.root', '[workspace].root'],
    ['channels.telegram', '[channels.telegram]\nowner = "1"\n', 'channels.telegram.owner', '[channels.telegram].owner'],
    ['channels.slack', '[channels.slack]\nbot_token = "x"\n', 'channels.slack.bot_token', '[channels.slack].bot_token'],
    ['channels.discord', '[channels.discord]\nguild = "1"\n', 'channels.discord.guild', '[channels.discord].guild'],
    ['top level', '[logging]\nlevel = "debug"\n', 'logging', '[logging]'],
    ['channels', '[channels.teams]\nowner_user_id = "1"\n', 'channels.teams', '[channels.teams]'],
    ['a top-level key', 'approved = true\n', 'approved', 'approved: unknown key'],
    [
      'channels, as a plain key',
      '[channels]\nowner_user_id = "1"\n',
      'channels.owner_user_id',
      '[channels].owner_user_id: unknown key',
    ],
  ])('refuses an unknown key in %s, naming the key and the file', (_where, toml, key, display) => {
    const error = refusal(toml);
    expect(error.details.issues.map((i) => i.key)).toEqual([key]);
    expect(error.message).toContain(display);
    expect(error.message).toContain(configPath);
  });

  it('suggests the key that was probably meant', () => {
    expect(refusal('[harness]\nmax_actve = 3\n').message).toContain('"max_active"');
  });

  it('refuses a bad alias name under [projects]', () => {
    const error = refusal('[projects]\n"-app" = "/x"\n"my app" = "/y"\n');
    expect(error.details.issues.map((i) => i.key).sort()).toEqual(['projects.-app', 'projects.my app']);
  });
});

describe('values', () => {
  it.each(['""', '"gpt"', '"Codex"'])('refuses default_vendor = %s', (value) => {
    const error = refusal(`[harness]\ndefault_vendor = ${value}\n`);
    expect(error.details.issues.map((i) => i.key)).toEqual(['harness.default_vendor']);
    expect(error.message).toContain('[harness].default_vendor');
  });

  it('accepts default_vendor = "claude"', () => {
    expect(
      parseConfigToml('[harness]\ndefault_vendor = "claude"\n', { configPath, homeDir: home }).harness.defaultVendor,
    ).toBe('claude');
  });

  it.each([
    ['default_timeout_minutes', 241, 240],
    ['prompt_argv_max_kb', 121, 120],
    ['max_active', 0, 1],
  ])('bounds %s (refuses %d, accepts %d)', (key, bad, good) => {
    expect(refusal(`[harness]\n${key} = ${bad}\n`).details.issues.map((i) => i.key)).toEqual([`harness.${key}`]);
    expect(() => parseConfigToml(`[harness]\n${key} = ${good}\n`, { configPath, homeDir: home })).not.toThrow();
  });

  it('allows zero where zero means something', () => {
    const config = parseConfigToml('[harness]\nmax_framing_errors = 0\nmin_free_gb = 0\n', {
      configPath,
      homeDir: home,
    });
    expect(config.harness).toMatchObject({ maxFramingErrors: 0, minFreeBytes: 0 });
  });

  it('lists every problem in one error, each with the expected shape', () => {
    const error = refusal('[harness]\nmax_active = 2.5\nenabled = "yes"\n[workspace]\nroots = [""]\n');
    expect(error.details.issues.map((i) => i.key).sort()).toEqual([
      'harness.enabled',
      'harness.max_active',
      'workspace.roots[0]',
    ]);
    expect(error.details.issues.find((i) => i.key === 'harness.max_active')?.message).toMatch(
      /^\[harness\]\.max_active: .*\(expected integer/,
    );
  });

  it('refuses a table where a value belongs', () => {
    expect(refusal('[harness.enabled]\nx = 1\n').details.issues.map((i) => i.key)).toEqual(['harness.enabled']);
  });
});

describe('channels', () => {
  it('normalizes integer user ids to strings, exactly even past 2^53', () => {
    const config = parseConfigToml(
      '[channels.telegram]\nowner_user_id = 123456789\nallowed_user_ids = [42, "7"]\n' +
        '[channels.discord]\nowner_user_id = 123456789012345678\n',
      { configPath, homeDir: home },
    );
    expect(config.channels.telegram).toEqual({ owner: '123456789', guests: ['42', '7'] });
    expect(config.channels.discord.owner).toBe('123456789012345678');
  });

  it.each(['1.5', '""', '"  "', '-3', 'true', '"12 34"'])('refuses owner_user_id = %s', (value) => {
    const error = refusal(`[channels.slack]\nowner_user_id = ${value}\n`);
    expect(error.details.issues.map((i) => i.key)).toEqual(['channels.slack.owner_user_id']);
  });

  it('refuses a bad entry in allowed_user_ids, naming its index', () => {
    expect(refusal('[channels.slack]\nallowed_user_ids = ["U1", 2.5]\n').details.issues.map((i) => i.key)).toEqual([
      'channels.slack.allowed_user_ids[1]',
    ]);
  });

  it('makes the single allowed user the owner when owner_user_id is absent', () => {
    const config = parseConfigToml('[channels.telegram]\nallowed_user_ids = ["555"]\n', { configPath, homeDir: home });
    expect(config.channels.telegram).toEqual({ owner: '555', guests: [] });
  });

  it('names no owner when several allowed users and no owner are listed', () => {
    const config = parseConfigToml('[channels.telegram]\nallowed_user_ids = ["1", "2"]\n', {
      configPath,
      homeDir: home,
    });
    expect(config.channels.telegram).toEqual({ owner: undefined, guests: ['1', '2'] });
  });

  it('never lists the owner or a duplicate among the guests', () => {
    const config = parseConfigToml('[channels.discord]\nowner_user_id = "1"\nallowed_user_ids = ["1", "2", 2]\n', {
      configPath,
      homeDir: home,
    });
    expect(config.channels.discord).toEqual({ owner: '1', guests: ['2'] });
  });
});

describe('paths', () => {
  it('expands ~ and ~/… against the home directory', () => {
    const config = parseConfigToml('[workspace]\nroots = ["~", "~/code/", "~/a/../b"]\n', {
      configPath,
      homeDir: home,
    });
    expect(config.workspace.roots).toEqual(['/home/owner', '/home/owner/code', '/home/owner/b']);
  });

  it("resolves relative paths against the config file's directory", () => {
    const config = parseConfigToml(
      '[workspace]\nroots = ["code", "../shared"]\ndefault = "./code/app"\n[projects]\nx = "x"\n',
      {
        configPath,
        homeDir: home,
      },
    );
    expect(config.workspace.roots).toEqual([path.join(dir, 'code'), path.join(path.dirname(dir), 'shared')]);
    expect(config.workspace.defaultCwd).toBe(path.join(dir, 'code', 'app'));
    expect(config.projects.get('x')).toBe(path.join(dir, 'x'));
  });

  it('refuses ~user, which it does not expand', () => {
    expect(refusal('[workspace]\nroots = ["~bob/code"]\n').details.issues.map((i) => i.key)).toEqual([
      'workspace.roots[0]',
    ]);
  });

  it('keeps any alias name, constructor included, as plain data', () => {
    const config = parseConfigToml('[projects]\nconstructor = "/c"\n"v1.2_x-y" = "/v"\n', {
      configPath,
      homeDir: home,
    });
    expect(config.projects.get('constructor')).toBe('/c');
    expect(config.projects.get('v1.2_x-y')).toBe('/v');
  });
});

describe('CONFIG_KEYS', () => {
  /** Walks the schema itself, independently of how CONFIG_KEYS is built. */
  function schemaKeys(): string[] {
    const keys: string[] = [];
    const unwrap = (s: z.ZodType): z.ZodType => {
      const def = s._zod.def as { type: string; innerType?: z.ZodType };
      return def.innerType !== undefined && ['default', 'prefault', 'optional'].includes(def.type)
        ? unwrap(def.innerType)
        : s;
    };
    for (const [section, schema] of Object.entries(configFileSchema.shape)) {
      const inner = unwrap(schema);
      if (inner instanceof z.ZodRecord) {
        keys.push(`${section}.<alias>`);
        // A record entry may also be a table (`[projects.NAME]`): its keys follow.
        const value = inner._zod.def.valueType as z.ZodType;
        if (value instanceof z.ZodUnion)
          for (const option of value.options as z.ZodType[])
            if (option instanceof z.ZodObject)
              for (const k of Object.keys(option.shape)) keys.push(`${section}.<alias>.${k}`);
        continue;
      }
      for (const [key, child] of Object.entries((inner as z.ZodObject).shape)) {
        const table = unwrap(child as z.ZodType);
        if (table instanceof z.ZodObject) for (const k of Object.keys(table.shape)) keys.push(`${section}.${key}.${k}`);
        else keys.push(`${section}.${key}`);
      }
    }
    return keys;
  }

  it('documents every key of the schema, in order, with a type and a description', () => {
    expect(CONFIG_KEYS.map((k) => `${k.section}.${k.key}`)).toEqual(schemaKeys());
    for (const doc of CONFIG_KEYS) {
      expect(doc.type.length, doc.key).toBeGreaterThan(0);
      expect(doc.description, doc.key).toMatch(/^[A-Z`"].{20,}\.$/);
    }
  });

  it('shows the defaults as TOML literals', () => {
    const find = (key: string) => CONFIG_KEYS.find((k) => k.section === 'harness' && k.key === key);
    expect(find('approved')?.default).toBe('false');
    expect(find('default_vendor')?.default).toBe('"codex"');
    expect(find('codex_home')?.default).toBeUndefined();
    expect(CONFIG_KEYS.find((k) => k.key === 'roots')?.default).toBe('[]');
  });
});

describe('the starter config', () => {
  it('loads, is not approved, and mentions every key', () => {
    const config = parseConfigToml(CONFIG_TEMPLATE, { configPath, homeDir: home });
    expect(config.harness.approved).toBe(false);
    expect(config).toEqual(parseConfigToml('', { configPath, homeDir: home }));
    for (const { section, key } of CONFIG_KEYS) {
      const name = key === '<alias>' ? 'app' : key;
      expect(CONFIG_TEMPLATE, `${section}.${key}`).toMatch(new RegExp(`^(# )?${name} = `, 'm'));
    }
    for (const platform of ['telegram', 'slack', 'discord'])
      expect(CONFIG_TEMPLATE).toContain(`# [channels.${platform}]`);
  });

  it('loads with the commented examples enabled', () => {
    const uncommented = CONFIG_TEMPLATE.replace(/^# ((\[channels|\[voice|\[projects\.|[a-z_]+ = ).*)$/gm, '$1');
    const config = parseConfigToml(uncommented, { configPath, homeDir: home });
    expect(config.channels.telegram.owner).toBe('123456789');
    expect(config.harness.codexHome).toBe('/home/owner/.codex');
    expect(config.voice).toMatchObject({ url: 'http://127.0.0.1:8080/v1', maxBytes: 25 * 1024 * 1024, confirm: true });
  });

  it('is written once, 0600 in a 0700 directory, and never overwrites', async () => {
    const file = path.join(dir, 'home', '.baton', 'config.toml');
    expect(file).toBe(defaultConfigPath(path.join(dir, 'home', '.baton')));
    await expect(ensureConfigFile(file)).resolves.toBe(true);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect(await readFile(file, 'utf8')).toBe(CONFIG_TEMPLATE);

    await writeFile(file, '[harness]\napproved = true\n');
    await expect(ensureConfigFile(file)).resolves.toBe(false);
    expect(await readFile(file, 'utf8')).toBe('[harness]\napproved = true\n');
    await expect(loadConfig({ configPath: file, homeDir: home })).resolves.toMatchObject({
      config: { harness: { approved: true } },
    });
  });
});

describe('[projects.NAME] tables', () => {
  it('refuses a malformed project table with the key and what it expects', () => {
    const parse = (toml: string) => () => parseConfigToml(toml, { configPath, homeDir: home });
    expect(parse('[projects.app]\npath = "/srv/app"\nverify = 3\n')).toThrow(
      /\[projects\]\.app\.verify: 3 is the wrong type \(expected string or array of strings\)/,
    );
    expect(parse('[projects.app]\npath = "/srv/app"\nverify = []\n')).toThrow(/\[projects\]\.app\.verify/);
    expect(parse('[projects.app]\npath = "/srv/app"\nverfy = "npm test"\n')).toThrow(
      /\[projects\]\.app\.verfy: unknown key \(did you mean "verify"\?\)/,
    );
    expect(parse('[projects.app]\npath = "/srv/app"\nverify_timeout_minutes = 0\n')).toThrow(
      /verify_timeout_minutes: 0 is too small \(expected integer minutes, 1 to 240\)/,
    );
  });
});
