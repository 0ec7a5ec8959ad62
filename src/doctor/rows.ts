/**
 * Row builders for the doctor areas that need no process: config, database, channels, harness
 * consent, storage. Each takes plain facts and returns one {@link DoctorRow}.
 */
import { describeNodes, type NodeView } from '../fleet/nodes.js';
import type { BatonConfig } from '../config/resolve.js';
import { CHANNEL_PLATFORMS, type ChannelPlatform } from '../config/schema.js';
import { isBatonError } from '../core/errors.js';
import { formatBytes, type StorageUsage } from '../harness/storage.js';
import type { DoctorRow } from './report.js';
import type { ChannelProbe, DatabaseProbe } from './sources.js';
import { databaseLocation, describeDatabaseKind } from '../store/database.js';

/** The `config` row: `fail` when the file cannot be read or does not validate (the service refuses to start). */
export function configRow(
  file: string,
  result: { exists: boolean } | { error: unknown },
  envFile?: { path: string; loaded: boolean },
  changedSinceStart?: string,
): DoctorRow {
  const envLine = envFile
    ? [envFile.loaded ? `.env read from ${envFile.path}` : `no .env file (baton reads only ${envFile.path})`]
    : [];
  if ('error' in result) {
    const message = result.error instanceof Error ? result.error.message : String(result.error);
    const [summary = 'cannot load the configuration', ...details] = message
      .split('\n')
      .filter((line) => line.trim() !== '');
    const errorCode = isBatonError(result.error) ? result.error.code : null;
    const rest = [...details.map((d) => d.trim()), 'the rows below assume the default settings', ...envLine];
    return {
      area: 'config',
      status: 'fail',
      summary,
      details: rest,
      facts: { file, exists: null, errorCode, envFile: envFile?.loaded ? envFile.path : null },
    };
  }
  return {
    area: 'config',
    status: changedSinceStart ? 'warn' : 'ok',
    summary: result.exists ? file : `${file} does not exist: defaults apply`,
    details: [
      ...(changedSinceStart ? [changedSinceStart] : []),
      ...(result.exists ? [] : ['`baton start` writes a commented starter file there']),
      ...envLine,
    ],
    facts: {
      file,
      exists: result.exists,
      errorCode: null,
      envFile: envFile?.loaded ? envFile.path : null,
      restartNeeded: changedSinceStart !== undefined,
    },
  };
}

/** The `database` row: `fail` when unusable; `warn` on dead letters or pending migrations. */
export function databaseRow(probe: DatabaseProbe): DoctorRow {
  if ('error' in probe) {
    const [summary = 'unusable', ...details] = probe.error.split('\n');
    return {
      area: 'database',
      status: 'fail',
      summary: `unusable: ${summary}`,
      details,
      facts: {
        engine: null,
        location: null,
        migrationsCurrent: null,
        activeRuns: null,
        pendingDeliveries: null,
        deadLetters: null,
        error: probe.error,
      },
    };
  }
  const { kind, counts } = probe;
  const where = describeDatabaseKind(kind);
  if (probe.notCreated) {
    return {
      area: 'database',
      status: 'ok',
      summary: `${where} · not created yet: the first \`baton start\` or \`baton ask\` creates it`,
      details: probe.note ? [probe.note] : [],
      facts: {
        engine: kind.engine,
        location: databaseLocation(kind),
        migrationsCurrent: null,
        activeRuns: 0,
        pendingDeliveries: 0,
        deadLetters: 0,
        error: null,
      },
    };
  }
  const details: string[] = [];
  if (!probe.migrationsCurrent) details.push('migrations pending: the service applies them at its next start');
  if (counts.deadLetters > 0)
    details.push(`${counts.deadLetters} dead-lettered message(s) were never delivered; \`baton runs\` lists them`);
  return {
    area: 'database',
    status: details.length > 0 ? 'warn' : 'ok',
    summary: `${where} · ${counts.active} active · ${counts.pendingDeliveries} pending delivery · ${counts.deadLetters} dead-lettered`,
    // Why the engine is PGlite is information, not a warning: everything works on it.
    details: probe.note ? [probe.note, ...details] : details,
    facts: {
      engine: kind.engine,
      location: databaseLocation(kind),
      migrationsCurrent: probe.migrationsCurrent,
      activeRuns: counts.active,
      pendingDeliveries: counts.pendingDeliveries,
      deadLetters: counts.deadLetters,
      error: null,
    },
  };
}

/**
 * One `channel:*` row per platform. Not configured is `ok` (skipped on purpose) unless no platform
 * is configured at all; a channel that is reconnecting, failed or stopped is `warn` (§3: a failing
 * channel never takes the service down).
 */
export function channelRows(channels: Readonly<Record<ChannelPlatform, ChannelProbe>>): DoctorRow[] {
  const none = CHANNEL_PLATFORMS.every((p) => !channels[p].configured);
  return CHANNEL_PLATFORMS.map((platform): DoctorRow => {
    const probe = channels[platform];
    const area = `channel:${platform}` as const;
    const details = probe.lastError === undefined ? [] : [`last error: ${probe.lastError}`];
    if (!probe.configured) {
      if (none) details.push('no chat platform is configured: set a bot token (see .env.example), then restart');
      const summary = `not configured${probe.reason === undefined ? '' : `: ${probe.reason}`}`;
      return { area, status: none ? 'warn' : 'ok', summary, details, facts: { configured: false, state: null } };
    }
    const state = probe.state;
    if (state === undefined) {
      return {
        area,
        status: 'ok',
        summary: 'configured (connection state unknown: no running service reported it)',
        details,
        facts: { configured: true, state: null },
      };
    }
    const summary =
      state.state === 'connected' || state.state === 'stopped' ? state.state : `${state.state}: ${state.reason}`;
    return {
      area,
      status: state.state === 'connected' || state.state === 'standby' ? 'ok' : 'warn',
      summary,
      details,
      facts: { configured: true, state: state.state },
    };
  });
}

/** Restart hints per vendor, from the vendor rows, e.g. `codex` when PATH no longer matches the start. */
export interface HarnessFindings {
  /** Vendors whose CLI is on PATH now. */
  readonly installed: readonly string[];
  /** Vendors whose CLI differs from what the running service found at start; null when unknown. */
  readonly restartFor: readonly string[] | null;
  /** Workspace settings that cannot work (from `workspaceWarnings`); each is a warning. */
  readonly workspace?: readonly string[] | undefined;
  /** Whether runs get a cgroup (undefined: not known) and the warnings when they do not. */
  readonly runCgroup?: { readonly available: boolean; readonly warnings: readonly string[] } | undefined;
}

/**
 * The `harness` row: consent and workspace (§6 gates 1, 2, 5). Not approved, no workspace root,
 * a root, default or alias that points nowhere or outside the roots, no CLI while enabled, or a
 * stale start-time CLI are `warn`; a disabled harness is `ok`.
 */
export function harnessRow(config: BatonConfig, findings: HarnessFindings): DoctorRow {
  const { enabled, approved, defaultVendor } = config.harness;
  const roots = config.workspace.roots.length;
  const facts = {
    enabled,
    approved,
    defaultVendor,
    workspaceRoots: roots,
    restartNeeded: findings.restartFor === null ? null : findings.restartFor.length > 0,
    runCgroup: findings.runCgroup?.available ?? null,
  };
  if (!enabled) {
    const hint =
      findings.installed.length > 0
        ? [`${findings.installed.join(' and ')} found: set [harness] enabled = true to use it, then restart`]
        : [];
    return { area: 'harness', status: 'ok', summary: 'disabled ([harness] enabled = false)', details: hint, facts };
  }
  const details: string[] = [];
  if (!approved)
    details.push(
      'not yet approved: run `baton approve` (or set [harness] approved = true); a running service applies it to its next command',
    );
  if (roots === 0)
    details.push(
      'no workspace roots, so no run can launch: run `baton grant path DIR`; a running service applies it to its next command',
    );
  details.push(...(findings.workspace ?? []));
  if (findings.installed.length === 0) details.push('no vendor CLI on PATH: install codex or claude, then restart');
  else if (!findings.installed.includes(defaultVendor))
    details.push(`/run uses ${defaultVendor}, which is not installed: install it or change [harness] default_vendor`);
  if (findings.restartFor !== null && findings.restartFor.length > 0)
    details.push(`restart baton to pick up ${findings.restartFor.join(', ')}`);
  details.push(...(findings.runCgroup?.warnings ?? []));
  const summary = `enabled · ${approved ? 'approved' : 'not approved'} · ${roots} workspace root${roots === 1 ? '' : 's'} · default vendor ${defaultVendor}`;
  return { area: 'harness', status: details.length > 0 ? 'warn' : 'ok', summary, details, facts };
}

/** What the storage probe returned: usage, or usage without free space and why, or only an error. */
export type StorageProbe =
  | { readonly usage: StorageUsage; readonly freeError?: string | undefined }
  | { readonly error: string };

/**
 * The `storage` row: artifact usage vs `artifact_quota_gb` (`fail` when at or over it, as the
 * launch gate refuses then), free space vs `min_free_gb` (`warn` below it or when unprobeable).
 */
export function storageRow(
  runsDir: string,
  limits: { artifactQuotaBytes: number; minFreeBytes: number },
  probe: StorageProbe,
): DoctorRow {
  const base = { runsDir, artifactQuotaBytes: limits.artifactQuotaBytes, minFreeBytes: limits.minFreeBytes };
  if ('error' in probe) {
    return {
      area: 'storage',
      status: 'warn',
      summary: `cannot measure ${runsDir}`,
      details: [probe.error],
      facts: { ...base, artifactBytes: null, quotaBreached: null, freeBytes: null },
    };
  }
  const { artifactBytes, freeBytes } = probe.usage;
  const breached = artifactBytes >= limits.artifactQuotaBytes;
  const percent = Math.round((artifactBytes / limits.artifactQuotaBytes) * 100);
  const details: string[] = [];
  if (breached)
    details.push(`new runs are refused: delete old run directories in ${runsDir} or raise [harness] artifact_quota_gb`);
  let free: string;
  if (limits.minFreeBytes === 0) free = 'free-space check off (min_free_gb = 0)';
  else if (freeBytes === undefined) {
    free = 'free space unknown';
    details.push(probe.freeError ?? 'the free space could not be read');
  } else {
    free = `${formatBytes(freeBytes)} free (floor ${formatBytes(limits.minFreeBytes)})`;
    if (freeBytes < limits.minFreeBytes)
      details.push(
        `free space is below the floor, so new runs are refused: free some space or lower [harness] min_free_gb`,
      );
  }
  return {
    area: 'storage',
    status: breached ? 'fail' : details.length > 0 ? 'warn' : 'ok',
    summary: `artifacts ${formatBytes(artifactBytes)} of ${formatBytes(limits.artifactQuotaBytes)} quota (${percent}%) · ${free}`,
    details,
    facts: { ...base, artifactBytes, quotaBreached: breached, freeBytes: freeBytes ?? null },
  };
}

/**
 * The `nodes` row: the fleet of baton processes sharing this database, as the running
 * service sees it. `warn` when a node is dead or two live nodes share a name.
 */
export function nodesRow(probe: readonly NodeView[] | { error: string }): DoctorRow {
  if ('error' in probe)
    return {
      area: 'nodes',
      status: 'warn',
      summary: `could not list the nodes: ${probe.error}`,
      details: [],
      facts: { nodes: null, alive: null },
    };
  const lines = describeNodes(probe);
  const alive = probe.filter((n) => n.alive).length;
  const trouble = lines.some((l) => l.includes('dead (') || l.includes('share this name'));
  return {
    area: 'nodes',
    status: trouble ? 'warn' : 'ok',
    summary: `${alive} of ${probe.length} node${probe.length === 1 ? '' : 's'} alive`,
    details: lines,
    facts: { nodes: probe.length, alive },
  };
}
