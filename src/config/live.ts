/**
 * The running service's view of `config.toml` after start. `baton approve` and `baton grant path`
 * edit the file while the service runs; the two keys they touch — `[harness] approved` and
 * `[workspace] roots` — are read per command and before each queue pass, so the service applies
 * them on its next command, doctor report or queued/routed run without a restart. Every other key was wired into the service at start
 * (channels, limits, timers) and still needs one; {@link LiveConfig.state} says so, and how.
 *
 * A file that does not parse or validate is never applied: the service keeps what it has and
 * the state carries the error.
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseToml } from 'smol-toml';
import type { Logger } from '../core/logger.js';
import { parseConfigToml } from './load.js';
import type { BatonConfig } from './resolve.js';

/** Keys applied without a restart, as `section.key` (the names config.toml uses). */
export const LIVE_KEYS = ['harness.approved', 'workspace.roots'] as const;

/** Where the running config stands against the file on disk. */
export type LiveConfigState =
  | { readonly kind: 'current' }
  /** The file sets other values for keys that take effect only at start (`section.key` names). */
  | { readonly kind: 'restart_needed'; readonly keys: readonly string[] }
  /** The file cannot be used; the service keeps its config. `message` is the loader's, which names the file. */
  | { readonly kind: 'invalid'; readonly message: string };

/** What {@link LiveConfig} needs. */
export interface LiveConfigOptions {
  readonly configPath: string;
  readonly homeDir: string;
  /** The config the service started with. */
  readonly config: BatonConfig;
  readonly logger: Logger;
  /** How to restart this service, in words (see {@link restartHow}). */
  readonly restartHow: string;
}

/** Whether the resolved configs differ in anything but the live keys. */
function differsBeyondLiveKeys(a: BatonConfig, b: BatonConfig): boolean {
  const strip = (c: BatonConfig) => ({
    ...c,
    harness: { ...c.harness, approved: false },
    workspace: { ...c.workspace, roots: [] },
  });
  return !isDeepStrictEqual(strip(a), strip(b));
}

/** Every leaf of a parsed TOML document as `table.key` (arrays are leaves). */
function leaves(data: unknown, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  if (data !== null && typeof data === 'object' && !Array.isArray(data)) {
    for (const [key, value] of Object.entries(data)) leaves(value, prefix ? `${prefix}.${key}` : key, out);
  } else {
    out.set(prefix, data);
  }
  return out;
}

/** The keys, in config.toml's own names, whose values differ between two TOML texts (live keys left out; sorted). */
function changedTomlKeys(a: string, b: string): string[] {
  const parse = (text: string) => leaves(parseToml(text.replace(/^\uFEFF/, ''), { integersAsBigInt: 'asNeeded' }));
  const left = parse(a);
  const right = parse(b);
  const keys: string[] = [];
  for (const key of new Set([...left.keys(), ...right.keys()])) {
    if ((LIVE_KEYS as readonly string[]).includes(key)) continue;
    if (!isDeepStrictEqual(left.get(key), right.get(key))) keys.push(key);
  }
  return keys.sort();
}

/** The most of config.toml the live reload reads, in bytes (a config is a few KiB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * config.toml's text, read without waiting on what is not a regular file: opened non-blocking
 * (a FIFO with no writer would hold the read, and every command waits on the refresh), checked
 * on the open descriptor to be a regular file (symlinks followed), and at most
 * {@link MAX_CONFIG_BYTES}.
 *
 * @throws the fs error (`ENOENT` for a missing file), or an error with code `ENOTREG` / `EFBIG`.
 */
async function readConfigText(path: string): Promise<string> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    const refuse = (code: string, what: string): never => {
      throw Object.assign(new Error(`${path} ${what}`), { code });
    };
    if (!info.isFile()) refuse('ENOTREG', 'is not a regular file');
    if (info.size > MAX_CONFIG_BYTES) refuse('EFBIG', `is over ${MAX_CONFIG_BYTES} bytes`);
    // Sized by the stat, one byte over so the end shows in the first read; grown (up to one byte
    // over the cap) if the file grew since. Every inbound event reads it: a zeroed
    // 1 MiB buffer each time was garbage for the collector on the launch path.
    let buffer = Buffer.allocUnsafe(info.size + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, MAX_CONFIG_BYTES + 1));
        buffer.copy(grown);
        buffer = grown;
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_CONFIG_BYTES) refuse('EFBIG', `is over ${MAX_CONFIG_BYTES} bytes`);
    }
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** SHA-256 of the text, hex. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * The service's config, refreshed from the file on demand. Never throws from {@link refresh}:
 * a file that cannot be read or used leaves the current config in place.
 */
export class LiveConfig {
  private started: BatonConfig;
  /** The file's text at the first look (right after start), for naming what changed. */
  private startedText: string | undefined;
  private currentConfig: BatonConfig;
  private seenDigest: string | undefined;
  private currentState: LiveConfigState = { kind: 'current' };
  private refreshing: Promise<void> | undefined;

  constructor(private readonly options: LiveConfigOptions) {
    this.started = options.config;
    this.currentConfig = options.config;
  }

  /** The config to act on now. */
  get current(): BatonConfig {
    return this.currentConfig;
  }

  /** Where the running config stands after the last {@link refresh}. */
  get state(): LiveConfigState {
    return this.currentState;
  }

  /**
   * The doctor's line for {@link state}, or undefined when the service runs on what the file says.
   * Always names how to restart.
   */
  describe(): string | undefined {
    const state = this.currentState;
    switch (state.kind) {
      case 'current':
        return undefined;
      case 'restart_needed':
        return `config changed since the service started (${state.keys.join(', ')}): restart it (${this.options.restartHow})`;
      case 'invalid':
        return `config changed since the service started and cannot be used, so the service keeps its old settings: ${state.message.split('\n')[0]} Fix the file, then restart it (${this.options.restartHow})`;
    }
  }

  /**
   * Reads the file; when its content changed since the last look, validates it and applies the
   * live keys. Concurrent callers share one read.
   */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const { configPath, homeDir, logger } = this.options;
    let text: string;
    try {
      text = await readConfigText(configPath);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A missing file means defaults; anything else cannot be used.
      if (code !== 'ENOENT') {
        const why = code === 'ENOTREG' || code === 'EFBIG' ? (err as Error).message : (code ?? 'unknown error');
        this.currentState = { kind: 'invalid', message: `Cannot read ${configPath} (${why}).` };
        return;
      }
      text = '';
    }
    const seen = digest(text);
    if (seen === this.seenDigest) return;
    let next: BatonConfig;
    try {
      next = parseConfigToml(text, { configPath, homeDir });
    } catch (err) {
      this.seenDigest = seen;
      const message = err instanceof Error ? err.message : String(err);
      logger.warn({ configPath }, 'config.toml changed but cannot be used; keeping the running config');
      this.currentState = { kind: 'invalid', message };
      return;
    }
    this.seenDigest = seen;
    this.startedText ??= text;
    const before = this.currentConfig;
    this.currentConfig = {
      ...this.started,
      harness: { ...this.started.harness, approved: next.harness.approved },
      workspace: { ...this.started.workspace, roots: next.workspace.roots },
    };
    if (
      before.harness.approved !== next.harness.approved ||
      !isDeepStrictEqual(before.workspace.roots, next.workspace.roots)
    ) {
      logger.info(
        { approved: next.harness.approved, roots: next.workspace.roots },
        'applied config.toml changes to consent and workspace roots',
      );
    }
    if (!differsBeyondLiveKeys(this.started, next)) {
      this.currentState = { kind: 'current' };
      return;
    }
    const keys = changedTomlKeys(this.startedText, text);
    this.currentState = { kind: 'restart_needed', keys: keys.length > 0 ? keys : ['(settings)'] };
  }
}

/**
 * How to restart a service started the way this one was, in words for a message.
 * `INVOCATION_ID` is set by systemd for every unit it starts (systemd.exec(5)).
 */
export function restartHow(facts: { underSystemd: boolean; isRoot: boolean; pid: number }): string {
  if (facts.underSystemd) return `systemctl ${facts.isRoot ? '' : '--user '}restart baton`;
  return `stop it with Ctrl-C in its terminal, or kill ${facts.pid}, then run baton start again`;
}
