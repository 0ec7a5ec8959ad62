/**
 * Turns the validated file ({@link ConfigFile}) into the {@link BatonConfig} the service reads:
 * camelCase names that carry their unit, durations in ms, sizes in bytes, every path absolute.
 * Paths are only made absolute here, never realpath'd: the launch gate follows symlinks at
 * launch time, so a root that does not exist yet is not a load error.
 */
import path from 'node:path';
import { hostname } from 'node:os';
import { splitNodeTarget } from '../core/node-target.js';
import { CHANNEL_PLATFORMS, type ChannelPlatform, type ConfigFile, type VendorName } from './schema.js';
import { resolveVoice, type VoiceConfig } from './voice-schema.js';

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;
const MS_PER_DAY = 24 * MS_PER_HOUR;
const BYTES_PER_KIB = 1024;
const BYTES_PER_MIB = 1024 * BYTES_PER_KIB;
const BYTES_PER_GIB = 1024 * BYTES_PER_MIB;

/** `[harness]`, resolved. Keys mirror the file; units are converted to ms and bytes. */
export interface HarnessConfig {
  /** False removes the run commands. */
  readonly enabled: boolean;
  /** One-time owner consent (launch gate 2). */
  readonly approved: boolean;
  /** Vendor `/run` launches. */
  readonly defaultVendor: VendorName;
  /** Most runs active at once. */
  readonly maxActive: number;
  /** `queue`: a run that cannot start now waits as queued instead of being refused. */
  readonly queue: boolean;
  /** `max_queued`: most queued runs per conversation. */
  readonly maxQueued: number;
  /** `on_quota`: what a new run of a vendor at its plan's limit does (wait for the reset, or be refused). */
  readonly onQuota: 'queue' | 'refuse';
  /** `quota_warn_percent`: share of a plan window, 1–100, at which the owner is warned once per period. */
  readonly quotaWarnPercent: number;
  /** Wall-clock limit of a run that asks for none, in ms. */
  readonly defaultTimeoutMs: number;
  /** `default_budget_usd`: dollar cap of a claude run that asks for none, or undefined for none. */
  readonly defaultBudgetUsd: number | undefined;
  /** `default_max_turns`: turn cap of a claude run that asks for none, or undefined for none. */
  readonly defaultMaxTurns: number | undefined;
  /** `default_max_tokens`: token cap (input + output) of a run that asks for none, or undefined for none. */
  readonly defaultMaxTokens: number | undefined;
  /** Silence after launch before the "no first event" notice, in ms. */
  readonly firstEventMs: number;
  /** `finish_grace_seconds` in ms: how long a CLI may take to exit after its terminal event. */
  readonly finishGraceMs: number;
  /** `pass_env`: names (or `PREFIX*`) of the service environment also given to each run's CLI. */
  readonly passEnv: readonly string[];
  /** Silence during a run before the inactivity notice, in ms. */
  readonly inactivityMs: number;
  /** How long a tool approval waits for the owner, in ms (`approval_timeout_minutes`); then it is denied. */
  readonly approvalTimeoutMs: number;
  /** Largest attachment, in bytes (`max_attachment_mb`). */
  readonly maxAttachmentBytes: number;
  /** Largest image that can go with a task, in pixels (`max_image_pixels`). */
  readonly maxImagePixels: number;
  /** Largest `hr_….patch` sent with an outcome, in bytes (`max_patch_kb`). */
  readonly maxPatchBytes: number;
  /** Largest single vendor event line, in bytes. */
  readonly maxEventBytes: number;
  /** Framing errors tolerated before `failed/protocol`; 0 = none. */
  readonly maxFramingErrors: number;
  /** Cap on one run's `events.jsonl`, in bytes. */
  readonly maxRunArtifactBytes: number;
  /** Cap on all run artifacts together, in bytes. */
  readonly artifactQuotaBytes: number;
  /** Free-disk floor for launching, in bytes; 0 disables the probe. */
  readonly minFreeBytes: number;
  /** Age past which a run directory is swept, in ms. */
  readonly artifactRetentionMs: number;
  /** Send attempts before a delivery is dead-lettered. */
  readonly deliveryMaxAttempts: number;
  /** Wait for the next parts of a split paste, in ms; 0 joins nothing. */
  readonly pasteJoinMs: number;
  /** `status_edit_seconds` in ms: least time between two live-status edits in one conversation; 0 turns them off. */
  readonly statusEditMs: number;
  /** Age past which an unsent delivery is dead-lettered, in ms. */
  readonly deliveryMaxAgeMs: number;
  /** Absolute `CODEX_HOME` for runs, or undefined to fall back to the service env / vendor default. */
  /** How codex runs are driven (`[harness] codex_transport`). */
  readonly codexTransport: 'app-server' | 'exec';
  readonly codexHome: string | undefined;
  /** Absolute `CLAUDE_CONFIG_DIR` for runs, or undefined to fall back likewise. */
  readonly claudeConfigDir: string | undefined;
}

/** `[workspace]`, resolved. */
export interface WorkspaceConfig {
  /** Absolute directories runs may use (not realpath'd; the launch gate does that). */
  readonly roots: readonly string[];
  /** Absolute default cwd, if configured. */
  readonly defaultCwd: string | undefined;
  /** `worktrees`: `per-run` gives every run its own git worktree; `off` only runs that ask with `worktree`. */
  readonly worktrees: 'off' | 'per-run';
  /** `worktree_retention_days` in ms: a finished run's worktree older than this is removed. */
  readonly worktreeRetentionMs: number;
}

/** `[node]`, resolved: this process's identity in a fleet sharing one database. */
export interface NodeConfig {
  /** Node name; the host name when `[node] name` is unset. */
  readonly name: string;
  /** Heartbeat period, in ms. */
  readonly heartbeatMs: number;
  /** A node whose heartbeat is older than this is dead, in ms. */
  readonly deadAfterMs: number;
  /** Most active runs across the fleet this node lets start; undefined: no fleet-wide cap. */
  readonly fleetMaxActive: number | undefined;
}

/** A project's verification: its directory, its commands in order and their time limit. */
export interface ProjectVerify {
  /** Absolute path of the project's directory. */
  readonly path: string;
  readonly commands: readonly string[];
  /** Time limit of all commands of one run, in minutes. */
  readonly timeoutMinutes: number;
}

/** Who may do what on one platform. */
export interface ChannelTrust {
  /** The one user id allowed to launch and stop runs; undefined when none is configured. */
  readonly owner: string | undefined;
  /** User ids allowed to read; never includes the owner; no duplicates. */
  readonly guests: readonly string[];
}

/** `[schedules]`, resolved. */
export interface SchedulesConfig {
  /** IANA zone of schedules that name none: `[schedules] timezone`, else this machine's. */
  readonly timezone: string;
  /** Slots missed while every node was down: fire the latest once (`one`) or none. */
  readonly catchUp: 'one' | 'none';
}

/** `[chat]`. */
export interface ChatConfig {
  /** `converse`: the owner's plain message continues the conversation; `commands`: only commands and replies act. */
  readonly plainMessages: 'converse' | 'commands';
}

/** The whole resolved configuration. */
export interface BatonConfig {
  readonly harness: HarnessConfig;
  readonly workspace: WorkspaceConfig;
  readonly node: NodeConfig;
  readonly schedules: SchedulesConfig;
  /** `[console]`: one more address of the web console (`HOST:PORT`), when set. */
  readonly console: { readonly listen?: string };
  /** Alias → absolute path, from `[projects]`. A Map, so `constructor` is just another alias. */
  readonly projects: ReadonlyMap<string, string>;
  /**
   * How runs in a project are verified, from `[projects.NAME] verify`: one entry per project of
   * this node that sets it, by its absolute path. Empty when none does.
   */
  readonly projectVerify: readonly ProjectVerify[];
  /** `[chat]`: how plain messages are read. */
  readonly chat: ChatConfig;
  /** Trust per platform; a platform without a `[channels.*]` table has no owner and no guests. */
  readonly channels: Readonly<Record<ChannelPlatform, ChannelTrust>>;
  /** `[voice]`: where the owner's voice notes are transcribed; undefined: voice notes are off. */
  readonly voice?: VoiceConfig;
}

/** Where relative paths and `~` point while resolving. */
export interface ResolvePathOptions {
  /** Absolute home directory that `~` stands for. */
  readonly homeDir: string;
  /** Absolute directory relative paths are resolved against (the config file's directory). */
  readonly baseDir: string;
}

/**
 * Expands `~` / `~/…` against `homeDir`, resolves a relative path against `baseDir`, and
 * normalizes the result (`..`, duplicate and trailing slashes). Symlinks are not followed.
 *
 * @throws Error when `homeDir` or `baseDir` is not absolute (a programming error).
 */
export function resolveUserPath(p: string, options: ResolvePathOptions): string {
  if (!path.isAbsolute(options.homeDir) || !path.isAbsolute(options.baseDir)) {
    throw new Error('resolveUserPath needs an absolute homeDir and baseDir');
  }
  if (p === '~') return path.resolve(options.homeDir);
  if (p.startsWith('~/')) return path.resolve(options.homeDir, p.slice(2));
  return path.resolve(options.baseDir, p);
}

/**
 * Trust of one platform: the owner, and the guests without the owner or duplicates. If
 * `owner_user_id` is absent and exactly one allowed id is listed, that id is the owner (§2).
 */
export function resolveChannelTrust(
  section: { owner_user_id?: string | undefined; allowed_user_ids: string[] } | undefined,
): ChannelTrust {
  if (section === undefined) return { owner: undefined, guests: [] };
  const allowed = [...new Set(section.allowed_user_ids)];
  const owner = section.owner_user_id ?? (allowed.length === 1 ? allowed[0] : undefined);
  return { owner, guests: allowed.filter((id) => id !== owner) };
}

/**
 * Converts a validated {@link ConfigFile} into a {@link BatonConfig}.
 *
 * @param file output of `configFileSchema.parse`.
 * @param options `homeDir` for `~`; `baseDir` = directory of the config file.
 * @throws Error when `homeDir` or `baseDir` is not absolute.
 */
export function resolveConfig(file: ConfigFile, options: ResolvePathOptions): BatonConfig {
  const resolvePath = (p: string): string => resolveUserPath(p, options);
  const optionalPath = (p: string | undefined): string | undefined => (p === undefined ? undefined : resolvePath(p));
  const h = file.harness;
  const channels = Object.fromEntries(
    CHANNEL_PLATFORMS.map((platform) => [platform, resolveChannelTrust(file.channels[platform])]),
  ) as Record<ChannelPlatform, ChannelTrust>;
  return {
    harness: {
      enabled: h.enabled,
      approved: h.approved,
      defaultVendor: h.default_vendor,
      maxActive: h.max_active,
      queue: h.queue,
      maxQueued: h.max_queued,
      onQuota: h.on_quota,
      quotaWarnPercent: h.quota_warn_percent,
      defaultTimeoutMs: h.default_timeout_minutes * MS_PER_MINUTE,
      defaultBudgetUsd: h.default_budget_usd,
      defaultMaxTurns: h.default_max_turns,
      defaultMaxTokens: h.default_max_tokens,
      firstEventMs: h.first_event_seconds * MS_PER_SECOND,
      inactivityMs: h.inactivity_minutes * MS_PER_MINUTE,
      approvalTimeoutMs: Math.round(h.approval_timeout_minutes * MS_PER_MINUTE),
      finishGraceMs: h.finish_grace_seconds * MS_PER_SECOND,
      passEnv: [...h.pass_env],
      maxAttachmentBytes: h.max_attachment_mb * BYTES_PER_MIB,
      maxImagePixels: h.max_image_pixels,
      maxPatchBytes: h.max_patch_kb * BYTES_PER_KIB,
      maxEventBytes: h.max_event_bytes,
      maxFramingErrors: h.max_framing_errors,
      maxRunArtifactBytes: h.max_run_artifact_mb * BYTES_PER_MIB,
      artifactQuotaBytes: Math.floor(h.artifact_quota_gb * BYTES_PER_GIB),
      minFreeBytes: Math.floor(h.min_free_gb * BYTES_PER_GIB),
      artifactRetentionMs: h.artifact_retention_days * MS_PER_DAY,
      deliveryMaxAttempts: h.delivery_max_attempts,
      pasteJoinMs: h.paste_join_ms,
      statusEditMs: h.status_edit_seconds * MS_PER_SECOND,
      deliveryMaxAgeMs: h.delivery_max_age_hours * MS_PER_HOUR,
      codexTransport: h.codex_transport,
      codexHome: optionalPath(h.codex_home),
      claudeConfigDir: optionalPath(h.claude_config_dir),
    },
    workspace: {
      roots: [...new Set(file.workspace.roots.map(resolvePath))],
      defaultCwd: optionalPath(file.workspace.default),
      worktrees: file.workspace.worktrees,
      worktreeRetentionMs: file.workspace.worktree_retention_days * MS_PER_DAY,
    },
    node: {
      name: file.node.name ?? hostname(),
      heartbeatMs: file.node.heartbeat_seconds * MS_PER_SECOND,
      deadAfterMs: file.node.dead_after_seconds * MS_PER_SECOND,
      fleetMaxActive: file.node.fleet_max_active === 0 ? undefined : file.node.fleet_max_active,
    },
    schedules: {
      timezone: file.schedules.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      catchUp: file.schedules.catch_up,
    },
    console: file.console.listen === undefined ? {} : { listen: file.console.listen },
    // `node:path` names another node's directory: that node resolves it.
    projects: new Map(
      Object.entries(file.projects).map(([alias, entry]) => {
        const p = typeof entry === 'string' ? entry : entry.path;
        return [alias, splitNodeTarget(p) ? p : resolvePath(p)];
      }),
    ),
    projectVerify: projectVerifyOf(file.projects, resolvePath),
    chat: { plainMessages: file.chat.plain_messages },
    channels,
    ...(file.voice ? { voice: resolveVoice(file.voice) } : {}),
  };
}

/** The `[projects.NAME]` tables of this node that set `verify`, with their paths resolved. */
function projectVerifyOf(projects: ConfigFile['projects'], resolvePath: (p: string) => string): ProjectVerify[] {
  return Object.values(projects).flatMap((entry) => {
    if (typeof entry === 'string' || entry.verify === undefined || splitNodeTarget(entry.path)) return [];
    const commands = typeof entry.verify === 'string' ? [entry.verify] : entry.verify;
    return [{ path: resolvePath(entry.path), commands, timeoutMinutes: entry.verify_timeout_minutes }];
  });
}
