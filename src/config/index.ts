/**
 * Configuration of baton: `config.toml` (schema, loading, starter template) and the
 * environment.
 */
export {
  CHANNEL_PLATFORMS,
  CONFIG_KEYS,
  CONFIG_SECTIONS,
  MAX_TIMEOUT_MINUTES,
  PROJECT_ALIAS_PATTERN,
  PROMPT_ARGV_MAX_KB_CAP,
  VENDOR_NAMES,
  configFileSchema,
  type ChannelPlatform,
  type ConfigFile,
  type ConfigKeyDoc,
  type VendorName,
} from './schema.js';
export {
  resolveChannelTrust,
  resolveConfig,
  resolveUserPath,
  type BatonConfig,
  type ChannelTrust,
  type HarnessConfig,
  type ResolvePathOptions,
  type WorkspaceConfig,
} from './resolve.js';
export type { VoiceConfig } from './voice-schema.js';
export { formatConfigIssues, type ConfigIssue } from './issues.js';
export { defaultConfigPath, loadConfig, parseConfigToml, type LoadConfigOptions, type LoadedConfig } from './load.js';
export { CONFIG_TEMPLATE, ensureConfigFile } from './template.js';
export {
  ENV_VARS,
  LOG_LEVELS,
  SECRET_ENV_NAMES,
  mergeEnv,
  parseEnv,
  readDotEnvFiles,
  resolveBatonHome,
  secretValues,
  type BatonEnv,
  type EnvKind,
  type EnvVarDoc,
  type LogLevel,
} from './env.js';
