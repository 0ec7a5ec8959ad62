/**
 * `baton approve`, `baton grant path DIR` and `baton doctor [--json]`.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { loadConfig, secretValues } from '../config/index.js';
import { approveConfig } from '../config/edit/approve.js';
import { grantPath } from '../config/edit/grant-path.js';
import type { ConfigEdit } from '../config/edit/file-edit.js';
import { BatonError } from '../core/errors.js';
import {
  collectDoctorReport,
  exitCode,
  formatDoctorTable,
  toDoctorJson,
  type DoctorJson,
  type DoctorReport,
} from '../doctor/index.js';
import type { DatabaseProbe } from '../doctor/sources.js';
import { readServiceState } from '../service/control-api/service-state.js';
import type { ServicePaths } from '../config/service-inputs.js';
import { migrationsCurrent, openDatabase } from '../store/database.js';
import { chooseEmbeddedEngine, embeddedDatabaseExists } from '../store/embedded-postgres.js';
import { RunStore } from '../store/runs-repo.js';
import { didYouMean, usageWith } from '../wording/suggest.js';
import { configEdited } from '../wording/config-edit.js';
import { installedUnitDelegation } from '../service/systemd-unit.js';
import { detectCgroupSupport } from '../harness/run-cgroup.js';
import type { CliCommand } from './command.js';

/** Whether `path` exists. */
export async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Sets `[harness] approved = true`. @returns the exit code. */
export async function approveCommand(paths: ServicePaths, out: (text: string) => void): Promise<number> {
  const edit = await approveConfig(paths.configPath, { homeDir: paths.homeDir });
  return printEdit(
    edit,
    `Coding agents are already approved in ${paths.configPath}.`,
    `Approved coding agents in ${paths.configPath}`,
    out,
  );
}

/**
 * Prints what an edit of `config.toml` did: `unchanged` when the file already said so, else
 * `done` with the changed lines.
 *
 * @returns the exit code (0).
 */
function printEdit(edit: ConfigEdit, unchanged: string, done: string, out: (text: string) => void): number {
  out(edit.changed ? configEdited(done, edit.diff) : unchanged);
  return 0;
}

/** Appends a workspace root. @returns the exit code. */
export const grantCommand: CliCommand<ServicePaths> = async (argv, paths, out) => {
  const force = argv.includes('--force');
  const [kind, dir, ...rest] = argv.filter((a) => a !== '--force');
  if (kind !== 'path' || !dir || rest.length > 0) {
    const odd = argv.find((a) => a.startsWith('-') && a !== '--force');
    const hint =
      odd !== undefined
        ? didYouMean(odd, ['--force'])
        : kind !== 'path' && kind !== undefined
          ? didYouMean(kind, ['path'])
          : '';
    throw new BatonError('usage', usageWith(hint, 'Usage: baton grant path [--force] DIR'));
  }
  const edit = await grantPath(paths.configPath, dir, { homeDir: paths.homeDir, cwd: process.cwd(), force });
  return printEdit(
    edit,
    `${edit.root} is already a workspace root in ${paths.configPath}.`,
    `Granted ${edit.root} in ${paths.configPath}`,
    out,
  );
};

/**
 * Prints the doctor table (or JSON). Asks the running service for its live view when one is
 * recorded in `$BATON_HOME/service.json`; otherwise inspects config, database and CLIs itself.
 *
 * @returns 0, or 1 when the artifact quota is breached or the database is unusable.
 */
export const doctorCommand: CliCommand<ServicePaths> = async (argv, paths, out) => {
  const unknown = argv.filter((a) => a !== '--json');
  if (unknown.length > 0)
    throw new BatonError('usage', usageWith(didYouMean(unknown[0]!, ['--json']), 'Usage: baton doctor [--json]'));
  const json = argv.includes('--json');
  const live = await fromService(paths.batonHome);
  if (live) {
    out(
      json
        ? JSON.stringify(live.report, null, 2)
        : formatDoctorTable({
            generatedAt: new Date(live.report.generatedAt),
            rows: live.report.rows as DoctorReport['rows'],
          }),
    );
    return live.report.exitCode;
  }
  const report = await collectLocally(paths);
  out(json ? toDoctorJson(report) : formatDoctorTable(report));
  return exitCode(report);
};

async function fromService(batonHome: string): Promise<{ report: DoctorJson; startedAt: string } | undefined> {
  const state = await readServiceState(batonHome);
  if (!state) return undefined;
  try {
    const response = await fetch(`http://127.0.0.1:${state.port}/health/ready`, { signal: AbortSignal.timeout(5_000) });
    if (response.status !== 200 && response.status !== 503) return undefined;
    return { report: (await response.json()) as DoctorJson, startedAt: state.startedAt };
  } catch {
    return undefined; // a stale state file: the service is gone
  }
}

async function collectLocally(paths: ServicePaths): Promise<DoctorReport> {
  let configResult: Awaited<ReturnType<typeof loadConfig>> | { error: unknown };
  try {
    configResult = await loadConfig({ configPath: paths.configPath, homeDir: paths.homeDir });
  } catch (error) {
    configResult = { error };
  }
  const env = paths.env;
  const channel = (token: string | undefined, variable: string) =>
    token ? { configured: true } : { configured: false, reason: `${variable} not set` };
  return collectDoctorReport({
    now: new Date(),
    homeDir: paths.homeDir,
    batonHome: paths.batonHome,
    config: {
      path: paths.configPath,
      result: configResult,
      envFile: { path: join(paths.batonHome, '.env'), loaded: paths.envFiles.length > 0 },
    },
    env: {
      PATH: paths.rawEnv.PATH ?? '',
      CODEX_HOME: env.codexHome,
      CLAUDE_CONFIG_DIR: env.claudeConfigDir,
      passable: paths.rawEnv,
    },
    database: await probeDatabase(paths),
    channels: {
      telegram: channel(env.telegramBotToken, 'TELEGRAM_BOT_TOKEN'),
      slack: channel(env.slackBotToken, 'SLACK_BOT_TOKEN'),
      discord: channel(env.discordBotToken, 'DISCORD_BOT_TOKEN'),
    },
    // No service runs: this process's cgroup stands in for where a service started here would be.
    runCgroups: { support: await detectCgroupSupport(), unit: await installedUnitDelegation(paths.homeDir) },
    secrets: secretValues(env),
  });
}

async function probeDatabase(paths: ServicePaths): Promise<DatabaseProbe> {
  if (!paths.env.databaseUrl && !(await embeddedDatabaseExists(paths.batonHome))) {
    // Looking must not create: opening the embedded engine would initialize a database in an empty home.
    const choice = await chooseEmbeddedEngine(paths.batonHome, paths.rawEnv.PATH);
    const kind =
      choice.engine === 'pglite'
        ? { engine: 'pglite' as const, dataDir: choice.dataDir }
        : { engine: 'embedded-postgres' as const, dataDir: choice.dataDir };
    return {
      kind,
      note: choice.engine === 'pglite' ? choice.why : undefined,
      migrationsCurrent: false,
      notCreated: true,
      counts: { active: 0, pendingDeliveries: 0, deadLetters: 0 },
    };
  }
  try {
    const database = await openDatabase(
      paths.env.databaseUrl
        ? { url: paths.env.databaseUrl, maxConnections: 1, migrate: false }
        : { embedded: paths.batonHome, pathEnv: paths.rawEnv.PATH, maxConnections: 1, migrate: false },
    );
    try {
      const current = await migrationsCurrent(database);
      const counts = current
        ? await new RunStore(database.db).outbox.counts()
        : { active: 0, pendingDeliveries: 0, deadLetters: 0 };
      return { kind: database.kind, note: database.note, migrationsCurrent: current, counts };
    } finally {
      await database.close();
    }
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}
