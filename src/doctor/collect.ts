/**
 * Gathers the doctor report from a {@link DoctorSources}: no network, no
 * keychain, no writes. Vendor homes come from `resolveVendorHomes`, the resolver runs use.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { parseConfigToml } from '../config/load.js';
import { VENDOR_NAMES, type VendorName } from '../config/schema.js';
import type { BatonConfig } from '../config/resolve.js';
import { isBatonError } from '../core/errors.js';
import { findOnPath } from '../harness/detect.js';
import { SECRET_ENV_NAMES } from '../config/env.js';
import { changesAccount, selectPassEnv } from '../harness/pass-env.js';
import { resolveVendorHomes } from '../harness/spawn-env.js';

/** Names every run's child gets besides its vendor home and `pass_env`. */
const FIXED_CHILD_ENV = ['HOME', 'PATH', 'TERM', 'USER', 'BATON_RUN_ID'];
import { measureStorage, type StorageUsage } from '../harness/storage.js';
import type { DoctorFact, DoctorReport, DoctorRow } from './report.js';
import { workspaceWarnings } from '../config/workspace-check.js';
import { channelRows, configRow, databaseRow, harnessRow, nodesRow, storageRow, type StorageProbe } from './rows.js';
import { readCliVersion, type DoctorSources } from './sources.js';
import { loginState, restartHint, vendorRow, type VendorFinding } from './vendors.js';
import { runCgroupWarnings } from './run-tracking.js';
import { quotaDoctorLine } from '../wording/quota.js';

/**
 * Builds the report: one row per area, in `DoctorArea` order. When the config cannot be
 * loaded its row fails and the other rows use the defaults. Never throws for a probe that fails:
 * that becomes the row's finding.
 *
 * @throws Error only on a programming error (e.g. a relative `homeDir`).
 */
export async function collectDoctorReport(sources: DoctorSources): Promise<DoctorReport> {
  const file = path.resolve(sources.config.path);
  const loaded = sources.config.result;
  const config =
    'config' in loaded ? loaded.config : parseConfigToml('', { configPath: file, homeDir: sources.homeDir });
  const homes = resolveVendorHomes(config.harness, sources.env, sources.homeDir);
  const vendors = sources.vendors ?? VENDOR_NAMES.map((name) => ({ name, binaryName: name }));
  const find = sources.findOnPath ?? findOnPath;
  const readVersion = sources.readVersion ?? readCliVersion;
  const started = sources.startedWith;
  const runsDir = path.join(sources.batonHome, 'harness', 'runs');
  const passedNames = Object.keys(selectPassEnv(config.harness.passEnv, sources.env.passable ?? {}, SECRET_ENV_NAMES));

  const probe: VendorProbe = { sources, config, homes, find, readVersion, passedNames };
  const [findings, storage] = await Promise.all([
    Promise.all(vendors.map((vendor) => findVendor(vendor, probe))),
    probeStorage(sources.measureStorage ?? measureStorage, runsDir, config.harness.minFreeBytes > 0),
  ]);

  const envWarning = sources.config.envFile?.loaded
    ? await envFilePermissionWarning(sources.config.envFile.path)
    : undefined;
  const rows: DoctorRow[] = [
    withWarning(
      configRow(
        file,
        'config' in loaded ? { exists: loaded.exists } : { error: loaded.error },
        sources.config.envFile,
        sources.config.changedSinceStart,
      ),
      envWarning,
    ),
    databaseRow(sources.database),
    ...channelRows(sources.channels),
    ...(sources.nodes === undefined ? [] : [nodesRow(sources.nodes)]),
    harnessRow(config, {
      installed: findings.filter((f) => f.path !== undefined).map((f) => f.name),
      restartFor: started === undefined ? null : findings.filter((f) => f.restart !== undefined).map((f) => f.name),
      workspace: await workspaceWarnings(config),
      runCgroup: sources.runCgroups && {
        available: 'parent' in sources.runCgroups.support,
        warnings: runCgroupWarnings(sources.runCgroups),
      },
    }),
    ...findings.map((f) =>
      withWarning(vendorRow(f, config.harness.enabled, started !== undefined), planLimitLine(sources, f.name, config)),
    ),
    storageRow(runsDir, config.harness, storage),
  ];
  return { generatedAt: sources.now, rows: rows.map((row) => finishRow(row, sources.secrets ?? [])) };
}

/** What {@link findVendor} needs, the same for every vendor of one report. */
interface VendorProbe {
  sources: DoctorSources;
  config: BatonConfig;
  homes: ReturnType<typeof resolveVendorHomes>;
  find: (name: string, pathEnv: string) => Promise<string | undefined>;
  readVersion: NonNullable<DoctorSources['readVersion']>;
  /** Names `pass_env` hands every run's child. */
  passedNames: readonly string[];
}

/** One vendor's row facts: its binary, version, login, home, child environment and warnings. */
async function findVendor(
  { name, binaryName }: { name: VendorName; binaryName: string },
  { sources, config, homes, find, readVersion, passedNames }: VendorProbe,
): Promise<VendorFinding> {
  const started = sources.startedWith;
  const home = name === 'codex' ? homes.codexHome : homes.claudeConfigDir;
  const binPath = await find(binaryName, sources.env.PATH);
  const [version, login] = await Promise.all([
    binPath === undefined ? undefined : readVersion(binPath, { HOME: sources.homeDir, PATH: sources.env.PATH }),
    loginState(name, home),
  ]);
  // A service that reported detections but none for this vendor did not find it.
  const atStart =
    started === undefined
      ? undefined
      : (started.find((d) => d.vendor === name) ?? { vendor: name, missing: 'not detected' });
  const childEnv = [...FIXED_CHILD_ENV, name === 'codex' ? 'CODEX_HOME' : 'CLAUDE_CONFIG_DIR', ...passedNames].sort();
  // Two runs at once on one CODEX_HOME with a ChatGPT login can race on the token refresh
  // (openai/codex#10332): both refresh, one refresh token is spent, the other run fails.
  const sharedHome =
    name === 'codex' && login.state === 'authenticated' && login.method === 'chatgpt' && config.harness.maxActive > 1
      ? `max_active = ${config.harness.maxActive} lets codex runs share ${home} with a ChatGPT login; concurrent token refreshes can log one of them out (openai/codex#10332). Use an API-key login for codex, or set max_active = 1.`
      : undefined;
  return {
    name,
    binaryName,
    home,
    path: binPath,
    version,
    login,
    restart: restartHint({ path: binPath, version }, atStart),
    childEnv,
    accountChanging: passedNames.filter((n) => changesAccount(name, n)),
    sharedHome,
    ...(name === 'codex' ? { transport: config.harness.codexTransport } : {}),
  };
}

/**
 * A warning when the `.env` at `file` sets a secret ({@link SECRET_ENV_NAMES}, non-empty) and
 * group or others may read it (any of mode 0o077), else undefined. Only names are looked at;
 * an unreadable file gives no warning (the service could not read it either).
 */
async function envFilePermissionWarning(file: string): Promise<string | undefined> {
  let mode: number;
  let text: string;
  try {
    [mode, text] = await Promise.all([stat(file).then((s) => s.mode), readFile(file, 'utf8')]);
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  const values = parseEnv(text);
  const secrets = SECRET_ENV_NAMES.filter((name) => (values[name] ?? '').trim() !== '');
  if (secrets.length === 0) return undefined;
  return `${file} holds ${secrets.join(', ')} and is readable by ${mode & 0o007 ? 'every user' : 'its group'} (mode ${(mode & 0o777).toString(8)}): chmod 600 ${file}`;
}

/** `row` warning with `warning` first among its details; a failing row stays failed. */
function withWarning(row: DoctorRow, warning: string | undefined): DoctorRow {
  if (warning === undefined) return row;
  return { ...row, status: row.status === 'fail' ? 'fail' : 'warn', details: [warning, ...row.details] };
}

/** The vendor row's line when the vendor is at its plan's usage limit on this node. */
function planLimitLine(sources: DoctorSources, vendor: string, config: BatonConfig): string | undefined {
  const limit = sources.planLimits?.find((l) => l.vendor === vendor);
  return limit ? quotaDoctorLine(vendor, limit.resetsAt, config.harness.onQuota) : undefined;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Usage and free space; when only free space cannot be read, usage without it. */
async function probeStorage(
  measure: (runsDir: string, probeFree: boolean) => Promise<StorageUsage>,
  runsDir: string,
  probeFree: boolean,
): Promise<StorageProbe> {
  try {
    return { usage: await measure(runsDir, probeFree) };
  } catch (err) {
    if (!probeFree || !isBatonError(err, 'storage_unprobeable')) return { error: messageOf(err) };
    try {
      return { usage: await measure(runsDir, false), freeError: err.message };
    } catch (inner) {
      return { error: messageOf(inner) };
    }
  }
}

/** Keeps the summary on one line and replaces every secret value in texts and string facts with `[redacted]`. */
function finishRow(row: DoctorRow, secrets: readonly string[]): DoctorRow {
  const values = secrets.filter((s) => s !== '').sort((a, b) => b.length - a.length);
  const scrub = (text: string): string => values.reduce((out, secret) => out.split(secret).join('[redacted]'), text);
  const facts = Object.fromEntries(
    Object.entries(row.facts).map(([key, value]): [string, DoctorFact] => [
      key,
      typeof value === 'string' ? scrub(value) : value,
    ]),
  );
  const summary = scrub(row.summary).replace(/\s*[\r\n]+\s*/g, ' ');
  return { ...row, summary, details: row.details.flatMap((d) => scrub(d).split(/\r?\n/)), facts };
}
