import { describe, expect, it } from 'vitest';
import { SECRET_ENV_NAMES } from '../../src/config/index.js';
import { changesAccount, looksSecret, selectPassEnv, withoutNpmRunScriptDirs } from '../../src/harness/pass-env.js';
import { DEFAULT_PASS_ENV } from '../../src/core/pass-env.js';

describe('pass_env', () => {
  const env = {
    HTTPS_PROXY: 'http://p:3128',
    https_proxy: 'http://p:3128',
    NO_PROXY: 'localhost',
    SSL_CERT_FILE: '/ca.pem',
    NODE_EXTRA_CA_CERTS: '/ca.pem',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LC_AUTH_TOKEN: 'x',
    HTTP_PROXY: undefined,
    DATABASE_URL: 'postgres://u:p@h/db',
    TELEGRAM_BOT_TOKEN: 't',
    OPENAI_API_KEY: 'sk',
    BATON_HOME: '/b',
    EDITOR: 'vi',
  };

  it('passes the standard proxy, CA-bundle and locale names that are set, by default', () => {
    expect(selectPassEnv(DEFAULT_PASS_ENV, env, SECRET_ENV_NAMES)).toEqual({
      HTTPS_PROXY: 'http://p:3128',
      https_proxy: 'http://p:3128',
      NO_PROXY: 'localhost',
      SSL_CERT_FILE: '/ca.pem',
      NODE_EXTRA_CA_CERTS: '/ca.pem',
      LANG: 'C.UTF-8',
      LC_ALL: 'C.UTF-8',
    });
  });

  it('passes a secret-looking name only when listed exactly, and never a service secret or BATON_*', () => {
    expect(selectPassEnv(['LC_*', 'OPENAI_*'], env, SECRET_ENV_NAMES)).toEqual({ LC_ALL: 'C.UTF-8' });
    expect(selectPassEnv(['OPENAI_API_KEY', 'LC_AUTH_TOKEN'], env, SECRET_ENV_NAMES)).toEqual({
      OPENAI_API_KEY: 'sk',
      LC_AUTH_TOKEN: 'x',
    });
    expect(
      selectPassEnv(['DATABASE_URL', 'TELEGRAM_BOT_TOKEN', 'BATON_HOME', 'BATON_*'], env, SECRET_ENV_NAMES),
    ).toEqual({});
  });

  it('tells secret-looking and account-changing names', () => {
    expect(['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'NPM_AUTH', 'SSH_PRIVATE', 'MY_API_KEY'].every(looksSecret)).toBe(
      true,
    );
    expect(['HTTPS_PROXY', 'LANG', 'SSL_CERT_FILE'].some(looksSecret)).toBe(false);
    expect(changesAccount('claude', 'ANTHROPIC_BASE_URL')).toBe(true);
    expect(changesAccount('claude', 'CLAUDE_CODE_USE_BEDROCK')).toBe(true);
    expect(changesAccount('codex', 'OPENAI_BASE_URL')).toBe(true);
    expect(changesAccount('codex', 'HTTPS_PROXY')).toBe(false);
  });

  it('under npm, drops the run-script directories npm put in front of PATH, keeping the rest in order', () => {
    const path =
      '/home/u/app/node_modules/.bin:/home/u/node_modules/.bin:/node_modules/.bin:/usr/lib/node_modules/npm/node_modules/@npmcli/run-script/lib/node-gyp-bin:/home/u/.local/bin:/opt/tools/node_modules/.bin:/usr/bin';
    const npm = { npm_lifecycle_event: 'start', npm_package_json: '/home/u/app/package.json' };
    expect(withoutNpmRunScriptDirs(path, npm)).toBe('/home/u/.local/bin:/opt/tools/node_modules/.bin:/usr/bin');
    expect(withoutNpmRunScriptDirs(path, {})).toBe(path);
  });

  it('keeps a node_modules/.bin that begins the user’s own PATH (a CLI installed there), found by a newcomer', () => {
    const npm = { npm_lifecycle_event: 'start', npm_package_json: '/home/u/baton/package.json' };
    const path =
      '/home/u/baton/node_modules/.bin:/home/u/node_modules/.bin:/node_modules/.bin:/home/u/tools/codex/node_modules/.bin:/usr/bin';
    expect(withoutNpmRunScriptDirs(path, npm)).toBe('/home/u/tools/codex/node_modules/.bin:/usr/bin');
  });
});
