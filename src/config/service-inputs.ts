/**
 * Where the service's settings come from: the environment, `$BATON_HOME/.env` and
 * `config.toml`. The caller hands the process environment in (only main reads `process.env`).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { mergeEnv, parseEnv, readDotEnvFiles, resolveBatonHome, type BatonEnv } from './env.js';
import { defaultConfigPath, loadConfig } from './load.js';
import type { BatonConfig } from './resolve.js';
import { ensureConfigFile } from './template.js';

/** Where the service's settings come from. */
export interface ServiceInputs {
  env: BatonEnv;
  rawEnv: Readonly<Record<string, string | undefined>>;
  batonHome: string;
  homeDir: string;
  configPath: string;
  config: BatonConfig;
  wroteConfig: boolean;
  /** The `.env` files that existed and were read (absolute paths; today at most `$BATON_HOME/.env`). */
  envFiles: string[];
}

/** Where things are, without loading the config (for commands that edit or diagnose it). */
export type ServicePaths = Omit<ServiceInputs, 'config' | 'wroteConfig'>;

/**
 * Reads `.env` files (see {@link readServicePaths}; the real environment wins), validates the
 * environment, writes a starter config on first start and loads it.
 *
 * @throws BatonError `env_invalid`, `config_invalid`, `config_unreadable`.
 */
export async function readServiceInputs(
  processEnv: Readonly<Record<string, string | undefined>>,
): Promise<ServiceInputs> {
  const paths = await readServicePaths(processEnv);
  const wroteConfig = await ensureConfigFile(paths.configPath);
  const { config } = await loadConfig({ configPath: paths.configPath, homeDir: paths.homeDir });
  return { ...paths, config, wroteConfig };
}

/**
 * Reads the environment and `$BATON_HOME/.env`, and resolves `$BATON_HOME` and the config path.
 *
 * `$BATON_HOME/.env` is the only `.env` file baton reads, and `BATON_HOME` itself comes from the
 * real environment only. Never the working directory: `baton ask` runs inside repositories, and a
 * repository's `.env` is untrusted input that could otherwise move `BATON_HOME` (a different
 * config, consent and roots) or `CODEX_HOME` (another model endpoint). The real
 * environment wins over the file.
 *
 * @throws BatonError `env_invalid`, `config_unreadable` (a `.env` that exists but cannot be read).
 */
export async function readServicePaths(
  processEnv: Readonly<Record<string, string | undefined>>,
): Promise<ServicePaths> {
  const homeDir = processEnv.HOME || homedir();
  const batonHome = resolveBatonHome(parseEnv({ BATON_HOME: processEnv.BATON_HOME }), homeDir);
  const envFile = join(batonHome, '.env');
  const rawEnv = mergeEnv(await readDotEnvFiles([envFile]), processEnv);
  const env = parseEnv(rawEnv);
  const envFiles = existsSync(envFile) ? [envFile] : [];
  return { env, rawEnv, batonHome, homeDir, configPath: defaultConfigPath(batonHome), envFiles };
}
