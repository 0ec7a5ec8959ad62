/**
 * Reads `config.toml`, validates it against {@link configFileSchema} and resolves it. Changes
 * apply on restart: the service loads once, at start, except the consent and
 * workspace roots that src/config/live.ts applies while it runs.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import { BatonError } from '../core/errors.js';
import { formatConfigIssues } from './issues.js';
import { resolveConfig, type BatonConfig } from './resolve.js';
import { configFileSchema } from './schema.js';

/** Where the configuration lives and what `~` means. */
export interface LoadConfigOptions {
  /** Path of `config.toml`; made absolute against the process cwd if relative. */
  readonly configPath: string;
  /** Absolute home directory that `~` in config paths stands for. */
  readonly homeDir: string;
}

/** The result of {@link loadConfig}. */
export interface LoadedConfig {
  /** The resolved configuration (all defaults when the file does not exist). */
  readonly config: BatonConfig;
  /** Absolute path of the file that was read (or would have been). */
  readonly file: string;
  /** False when the file does not exist and defaults were used. */
  readonly exists: boolean;
}

/** `$BATON_HOME/config.toml`. */
export function defaultConfigPath(batonHome: string): string {
  return path.join(batonHome, 'config.toml');
}

/**
 * Validates and resolves the text of a `config.toml` (no file access; handy in tests).
 *
 * @param text TOML source.
 * @param options `configPath` names the file in messages and anchors relative paths.
 * @throws BatonError `config_invalid` on a TOML syntax error (with line and column) or on any
 *   schema problem (every problem listed in one message; `details.issues` holds `{ key, message }`).
 */
export function parseConfigToml(text: string, options: LoadConfigOptions): BatonConfig {
  const file = path.resolve(options.configPath);
  let data: unknown;
  try {
    // 'asNeeded': ids past 2^53 (Discord snowflakes) come back as exact bigints.
    data = parseToml(text.replace(/^\uFEFF/, ''), { integersAsBigInt: 'asNeeded' });
  } catch (err) {
    throw syntaxError(file, err);
  }
  const result = configFileSchema.safeParse(data);
  if (!result.success) {
    const issues = formatConfigIssues(result.error.issues, data);
    const lines = issues.map((i) => `  ${i.message}`).join('\n');
    throw new BatonError(
      'config_invalid',
      `Invalid configuration in ${file}:\n${lines}\nFix ${issues.length === 1 ? 'this key' : 'these keys'}, then restart baton.`,
      { cause: result.error, details: { file, issues } },
    );
  }
  return resolveConfig(result.data, { homeDir: options.homeDir, baseDir: path.dirname(file) });
}

function syntaxError(file: string, err: unknown): BatonError {
  if (err instanceof TomlError) {
    // smol-toml's message is "Invalid TOML document: REASON\n\nCODEBLOCK"; keep REASON only.
    const reason = err.message.replace(/^Invalid TOML document:\s*/, '').split('\n')[0] ?? err.message;
    return new BatonError(
      'config_invalid',
      `${file}:${err.line}:${err.column}: TOML syntax error: ${reason}\n${err.codeblock}Fix the syntax, then restart baton.`,
      { cause: err, details: { file, line: err.line, column: err.column } },
    );
  }
  const reason = err instanceof Error ? err.message : String(err);
  return new BatonError('config_invalid', `${file}: cannot parse TOML: ${reason}`, { cause: err, details: { file } });
}

/**
 * Reads, validates and resolves `config.toml`. A missing file is not an error: every default
 * applies and `exists` is false.
 *
 * @throws BatonError `config_unreadable` when the file exists but cannot be read (permissions, a
 *   directory, an I/O error); the message names the file.
 * @throws BatonError `config_invalid` as described for {@link parseConfigToml}.
 * @throws Error when `homeDir` is not absolute (a programming error).
 */
export async function loadConfig(options: LoadConfigOptions): Promise<LoadedConfig> {
  const file = path.resolve(options.configPath);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      return { config: parseConfigToml('', { ...options, configPath: file }), file, exists: false };
    }
    throw new BatonError(
      'config_unreadable',
      `Cannot read the configuration file ${file} (${code ?? 'unknown error'}). Check that it is a readable file, then restart baton.`,
      { cause: err, details: { file, errno: code } },
    );
  }
  return { config: parseConfigToml(text, { ...options, configPath: file }), file, exists: true };
}
