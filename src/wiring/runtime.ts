/**
 * The core every front end shares — the service (`baton start`) and the terminal channel
 * (`baton ask`): storage, vendor detection, outbox, run supervisor and dispatcher.
 */
import { approvalWords } from '../wording/approvals.js';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ChannelAdapter, Platform } from '../channels/types.js';
import { SECRET_ENV_NAMES, type BatonConfig, type BatonEnv } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { Outbox, QUICK_RETRY_DELAYS_MS } from '../delivery/outbox.js';
import { PressSettler } from '../delivery/settle-press.js';
import { StatusEditor } from '../delivery/status-editor.js';
import { Dispatcher, type DispatcherDeps } from '../dispatch/dispatcher.js';
import { ApprovalBroker } from '../harness/approvals.js';
import { detectVendors, type Detection } from '../harness/detect.js';
import { voiceSecretNames, voiceTranscriber } from './voice.js';
import { selectPassEnv, withoutNpmRunScriptDirs } from '../harness/pass-env.js';
import { detectCgroupSupport, type CgroupSupport } from '../harness/run-cgroup.js';
import { resolveVendorHomes, type BaseEnv } from '../harness/spawn-env.js';
import type { InstalledVendor, RunSupervisor } from '../harness/supervisor.js';
import type { VendorName } from '../harness/vendors/types.js';
import { ApprovalStore } from '../store/approvals-repo.js';
import { openDatabase, type Database, type OpenDatabaseOptions } from '../store/database.js';
import { openDatabaseWithRetry, type OpenRetryDeps } from '../store/open-retry.js';
import { PressClaims } from '../store/press-claims.js';
import { RunStore } from '../store/runs-repo.js';
import { ScheduleStore } from '../store/schedules-repo.js';
import { buildSupervisor } from './run-supervisor.js';
import { vendorsFor } from './vendors.js';

/** What {@link buildRuntime} needs. */
export interface RuntimeInputs {
  env: BatonEnv;
  rawEnv: Readonly<Record<string, string | undefined>>;
  config: BatonConfig;
  batonHome: string;
  homeDir: string;
  clock: Clock;
  logger: Logger;
  /** The doctor table for `/doctor` in chat; absent where there is no service to report on. */
  doctor?: () => Promise<string>;
  /** The fleet's nodes for `/runs`; absent outside the service. */
  nodes?: () => Promise<string[]>;
  /** This node of the fleet, for routing launches; absent outside the service. */
  fleet?: DispatcherDeps['fleet'];
  /** True for `baton ask`, which reads config.toml anew each time (see {@link DispatcherDeps.configPerCommand}). */
  configPerCommand?: boolean;
  /** `own` for `baton ask`, which starts only the queued run it waits for (see {@link DispatcherDeps.queueScope}). @default 'all' */
  queueScope?: DispatcherDeps['queueScope'];
  /**
   * Tool approvals through this process's HTTP port: the service sets the port once
   * its health server listens. @default none (`baton ask` alone: runs launch without approvals)
   */
  approvalPort?: { port?: number };
  /** The service's live config (src/config/live.ts), handed to the dispatcher. @default none */
  liveConfig?: DispatcherDeps['liveConfig'];
  /** How to restart the service, for refusals that need a restart. @default none */
  restartHow?: string;
  /** Wait for an unreachable PostgreSQL at start (the service); absent: fail at once (`baton ask`). */
  openRetry?: OpenRetryDeps;
}

/** The shared core, ready to dispatch. */
export interface Runtime {
  database: Database;
  store: RunStore;
  /** Schedules and their firings. */
  schedules: ScheduleStore;
  outbox: Outbox;
  /** Edits runs' started messages into their live status. */
  statusEditor: StatusEditor;
  supervisor: RunSupervisor;
  dispatcher: Dispatcher;
  approvalStore: ApprovalStore;
  /** Tool approvals, when this process serves them ({@link RuntimeInputs.approvalPort}). */
  approvals?: ApprovalBroker;
  /** Adapters the outbox sends through; front ends add theirs. */
  adapters: Map<Platform, ChannelAdapter>;
  detections: Detection[];
  installed: ReadonlyMap<VendorName, InstalledVendor>;
  runsDir: string;
  host: string;
  /** Where run cgroups are made, or why they cannot be. */
  cgroups: CgroupSupport;
}

/**
 * Opens the database and builds the core.
 *
 * @throws BatonError `database_unavailable`, `migration_failed`.
 */
export async function buildRuntime(inputs: RuntimeInputs): Promise<Runtime> {
  const { env, config, clock, logger } = inputs;
  const baseEnv = childBaseEnv(inputs);
  // Finding the CLIs (a `--version` each) overlaps the database's start (embedded PostgreSQL's
  // server start, migrations): neither needs the other.
  const probing = Promise.all([
    detectVendors(vendorsFor(config.harness.codexTransport), { HOME: baseEnv.HOME, PATH: baseEnv.PATH }),
    detectCgroupSupport(),
  ]);
  probing.catch(() => undefined); // awaited below; a database error must not leave it unhandled
  const database = await openStorage(inputs);
  const store = new RunStore(database.db);
  const [detections, cgroups] = await probing;
  if ('unavailable' in cgroups)
    logger.info(
      { why: cgroups.unavailable },
      'runs are followed by their process tree: no cgroup v2 directory baton may write',
    );
  const installed = new Map<VendorName, InstalledVendor>();
  for (const d of detections) if ('found' in d) installed.set(d.vendor, d.found);

  const adapters = new Map<Platform, ChannelAdapter>();
  const outbox = buildOutbox(store, adapters, config, clock, logger);
  const statusEditor = new StatusEditor({ store, adapters, clock, logger, intervalMs: config.harness.statusEditMs });
  const host = hostname();
  const runsDir = join(inputs.batonHome, 'harness', 'runs');
  const homes = resolveVendorHomes(
    config.harness,
    { CODEX_HOME: env.codexHome, CLAUDE_CONFIG_DIR: env.claudeConfigDir },
    inputs.homeDir,
  );
  const approvalStore = new ApprovalStore(database.db);
  const protectedDirs = [inputs.batonHome, homes.codexHome, homes.claudeConfigDir];
  const approvals = inputs.approvalPort
    ? buildApprovals(inputs, { approvalStore, store, outbox, adapters, runsDir, protectedDirs })
    : undefined;
  const supervisor = buildSupervisor({
    config,
    batonHome: inputs.batonHome,
    store,
    outbox,
    statusEditor,
    approvalStore,
    clock,
    logger,
    installed,
    homes,
    baseEnv,
    runsDir,
    host,
    cgroups,
    ...(inputs.approvalPort ? { approvalPort: inputs.approvalPort } : {}),
    ...(approvals ? { approvals } : {}),
  });
  const schedules = new ScheduleStore(database.db);
  const core = { database, store, schedules, outbox, supervisor, adapters, installed, runsDir, protectedDirs };
  const dispatcher = buildDispatcher(inputs, core, approvals);
  supervisor.onRunEnded = () => void dispatcher.startQueued();
  return {
    database,
    store,
    schedules,
    approvalStore,
    ...(approvals ? { approvals } : {}),
    outbox,
    statusEditor,
    supervisor,
    dispatcher,
    adapters,
    detections,
    installed,
    runsDir,
    host,
    cgroups,
  };
}

/** The environment every CLI process starts from (HOME, a cleaned PATH, the passed variables). */
function childBaseEnv(inputs: RuntimeInputs): BaseEnv {
  const { rawEnv } = inputs;
  return {
    HOME: inputs.homeDir,
    // Relative and empty entries are dropped where a process is spawned (buildChildEnv, detectVendors).
    PATH: withoutNpmRunScriptDirs(rawEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin', rawEnv),
    TERM: rawEnv.TERM,
    USER: rawEnv.USER,
    passed: selectPassEnv(inputs.config.harness.passEnv, rawEnv, [
      ...SECRET_ENV_NAMES,
      ...voiceSecretNames(inputs.config),
    ]),
  };
}

/**
 * Opens (and migrates) the database `DATABASE_URL` names, or the embedded one under `$BATON_HOME`.
 *
 * @throws BatonError `database_unavailable`, `migration_failed`.
 */
async function openStorage(inputs: RuntimeInputs): Promise<Database> {
  const options: OpenDatabaseOptions = inputs.env.databaseUrl
    ? { url: inputs.env.databaseUrl }
    : { embedded: inputs.batonHome, pathEnv: inputs.rawEnv.PATH };
  const database = inputs.openRetry
    ? await openDatabaseWithRetry(options, inputs.openRetry)
    : await openDatabase(options);
  // A server killed under the service (the OOM killer) is started again; nobody else would.
  database.superviseServer?.(inputs.logger);
  return database;
}

/** The outbox, with the config's delivery limits. */
function buildOutbox(
  store: RunStore,
  adapters: Map<Platform, ChannelAdapter>,
  config: BatonConfig,
  clock: Clock,
  logger: Logger,
): Outbox {
  return new Outbox({
    store,
    clock,
    logger,
    adapters,
    policy: {
      backoffBaseMs: 30_000,
      backoffCapMs: 1_800_000,
      quickRetryDelaysMs: QUICK_RETRY_DELAYS_MS,
      maxAttempts: config.harness.deliveryMaxAttempts,
      maxAgeMs: config.harness.deliveryMaxAgeMs,
    },
  });
}

/** The dispatcher over the built core, with what only some front ends give it. */
function buildDispatcher(
  inputs: RuntimeInputs,
  core: {
    database: Database;
    store: RunStore;
    schedules: ScheduleStore;
    outbox: Outbox;
    supervisor: RunSupervisor;
    adapters: Map<Platform, ChannelAdapter>;
    installed: ReadonlyMap<VendorName, InstalledVendor>;
    runsDir: string;
    protectedDirs: string[];
  },
  approvals: ApprovalBroker | undefined,
): Dispatcher {
  const pressClaims = new PressClaims(core.database.db);
  return new Dispatcher({
    schedules: core.schedules,
    ...(approvals ? { approvals } : {}),
    pressClaims,
    pressSettler: new PressSettler({ claims: pressClaims, adapters: core.adapters, logger: inputs.logger }),
    config: inputs.config,
    store: core.store,
    outbox: core.outbox,
    supervisor: core.supervisor,
    clock: inputs.clock,
    logger: inputs.logger,
    vendors: core.installed,
    homeDir: inputs.homeDir,
    runsDir: core.runsDir,
    protectedDirs: core.protectedDirs,
    worktreesDir: join(inputs.batonHome, 'worktrees'),
    ...(inputs.doctor ? { doctor: inputs.doctor } : {}),
    ...(inputs.nodes ? { nodes: inputs.nodes } : {}),
    ...(inputs.fleet ? { fleet: inputs.fleet } : {}),
    configPerCommand: inputs.configPerCommand ?? false,
    ...(inputs.queueScope ? { queueScope: inputs.queueScope } : {}),
    ...(inputs.liveConfig ? { liveConfig: inputs.liveConfig } : {}),
    ...(inputs.restartHow ? { restartHow: inputs.restartHow } : {}),
    transcribe: voiceTranscriber(inputs.rawEnv),
  });
}

/** Tool approvals through this process's control API (the service only). */
function buildApprovals(
  inputs: RuntimeInputs,
  core: {
    approvalStore: ApprovalStore;
    store: RunStore;
    outbox: Outbox;
    adapters: Map<Platform, ChannelAdapter>;
    runsDir: string;
    protectedDirs: string[];
  },
): ApprovalBroker {
  return new ApprovalBroker({
    approvals: core.approvalStore,
    store: core.store,
    outbox: core.outbox,
    clock: inputs.clock,
    logger: inputs.logger,
    timeoutMs: inputs.config.harness.approvalTimeoutMs,
    runsDir: core.runsDir,
    maxMessageLength: (platform) => core.adapters.get(platform as Platform)?.maxMessageLength,
    homeDir: inputs.homeDir,
    protectedDirs: core.protectedDirs,
    words: approvalWords,
  });
}
