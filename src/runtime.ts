/**
 * The core every front end shares — the service (`baton start`) and the terminal channel
 * (`baton ask`): storage, vendor detection, outbox, run supervisor and dispatcher.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ChannelAdapter, Platform } from './channels/types.js';
import { SECRET_ENV_NAMES, type BatonConfig, type BatonEnv } from './config/index.js';
import type { Clock } from './core/clock.js';
import type { Logger } from './core/logger.js';
import type { DispatcherDeps } from './dispatch/dispatcher.js';
import { Outbox } from './delivery/outbox.js';
import { Dispatcher } from './dispatch/dispatcher.js';
import { outcomeText, statusText } from './wording/runs.js';
import { harnessWords } from './wording/harness.js';
import { runTag } from './wording/run-tag.js';
import { codexLoginState } from './doctor/login.js';
import { StatusEditor } from './delivery/status-editor.js';
import { detectVendors, type Detection } from './harness/detect.js';
import { selectPassEnv, withoutNpmRunScriptDirs } from './harness/pass-env.js';
import { resolveVendorHomes, type BaseEnv } from './harness/spawn-env.js';
import { detectCgroupSupport, type CgroupSupport } from './harness/run-cgroup.js';
import { RunSupervisor, type InstalledVendor, type SupervisorDeps } from './harness/supervisor.js';
import { ApprovalBroker } from './harness/approvals.js';
import { APPROVAL_SERVER_SCRIPT } from './harness/approval-names.js';
import { ApprovalStore } from './store/approvals-repo.js';
import { PressClaims } from './store/press-claims.js';
import { PressSettler } from './delivery/settle-press.js';
import { BatonError } from './core/errors.js';
import { serviceStatePath } from './health.js';
import { fileURLToPath } from 'node:url';
import { fileTracer } from './harness/traces.js';
import { claudeVendor } from './harness/vendors/claude.js';
import { codexVendor } from './harness/vendors/codex.js';
import type { Vendor, VendorName } from './harness/vendors/types.js';
import { openDatabase, type Database, type OpenDatabaseOptions } from './store/database.js';
import { openDatabaseWithRetry, type OpenRetryDeps } from './store/open-retry.js';
import { RunStore } from './store/runs-repo.js';

/** Vendors this build can drive. */
export const VENDORS: readonly Vendor[] = [codexVendor, claudeVendor];
/** SIGINT → SIGKILL grace when stopping a run, in ms. */
export const KILL_GRACE_MS = 3_000;
/**
 * How long output is still read after a CLI has exited, in ms: a descendant that inherited its
 * stdout can keep the pipe open for as long as it lives.
 */
export const EXIT_DRAIN_MS = 2_000;

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
  const { env, config, rawEnv, clock, logger } = inputs;
  const options: OpenDatabaseOptions = env.databaseUrl ? { url: env.databaseUrl } : { embedded: inputs.batonHome };
  const baseEnv: BaseEnv = {
    HOME: inputs.homeDir,
    // Relative and empty entries are dropped where a process is spawned (buildChildEnv, detectVendors).
    PATH: withoutNpmRunScriptDirs(rawEnv.PATH ?? '/usr/local/bin:/usr/bin:/bin', rawEnv),
    TERM: rawEnv.TERM,
    USER: rawEnv.USER,
    passed: selectPassEnv(config.harness.passEnv, rawEnv, SECRET_ENV_NAMES),
  };
  // Finding the CLIs (a `--version` each) overlaps the database's start (embedded PostgreSQL's
  // server start, migrations): neither needs the other.
  const probing = Promise.all([
    detectVendors(VENDORS, { HOME: baseEnv.HOME, PATH: baseEnv.PATH }),
    detectCgroupSupport(),
  ]);
  probing.catch(() => undefined); // awaited below; a database error must not leave it unhandled
  const database = inputs.openRetry
    ? await openDatabaseWithRetry(options, inputs.openRetry)
    : await openDatabase(options);
  // A server killed under the service (the OOM killer) is started again; nobody else would.
  database.superviseServer?.(logger);
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
  const outbox = new Outbox({
    store,
    clock,
    logger,
    adapters,
    policy: {
      backoffBaseMs: 30_000,
      backoffCapMs: 1_800_000,
      maxAttempts: config.harness.deliveryMaxAttempts,
      maxAgeMs: config.harness.deliveryMaxAgeMs,
    },
  });
  const statusEditor = new StatusEditor({ store, adapters, clock, logger, intervalMs: config.harness.statusEditMs });
  const host = hostname();
  const runsDir = join(inputs.batonHome, 'harness', 'runs');
  const homes = resolveVendorHomes(
    config.harness,
    { CODEX_HOME: env.codexHome, CLAUDE_CONFIG_DIR: env.claudeConfigDir },
    inputs.homeDir,
  );
  const approvalStore = new ApprovalStore(database.db);
  const pressClaims = new PressClaims(database.db);
  const supervisor = new RunSupervisor({
    store,
    outbox,
    clock,
    logger,
    vendors: installed,
    homes,
    baseEnv,
    runsDir,
    limits: {
      maxEventBytes: config.harness.maxEventBytes,
      maxFramingErrors: config.harness.maxFramingErrors,
      killGraceMs: KILL_GRACE_MS,
      maxRunArtifactBytes: config.harness.maxRunArtifactBytes,
      firstEventMs: config.harness.firstEventMs,
      inactivityMs: config.harness.inactivityMs,
      finishGraceMs: config.harness.finishGraceMs,
      exitDrainMs: EXIT_DRAIN_MS,
      maxPatchBytes: config.harness.maxPatchBytes,
    },
    describeOutcome: outcomeText,
    words: harnessWords,
    codexLoginMissing: async (home) => (await codexLoginState(home)).state === 'not_authenticated',
    status: { editor: statusEditor, describe: statusText },
    supervisorId: `${host}:${process.pid}`,
    cgroups,
    ...(inputs.approvalPort ? { approvalServer: approvalServerFor(inputs.approvalPort, inputs.batonHome) } : {}),
    onRunEnded: async (runId) => void (await approvalStore.closeGone(clock.now(), runId)),
    tracer: fileTracer(join(inputs.batonHome, 'traces'), clock, logger),
  });
  const approvals = inputs.approvalPort
    ? new ApprovalBroker({
        approvals: approvalStore,
        store,
        outbox,
        clock,
        logger,
        timeoutMs: config.harness.approvalTimeoutMs,
        runsDir,
        maxMessageLength: (platform) => adapters.get(platform as Platform)?.maxMessageLength,
        homeDir: inputs.homeDir,
        protectedDirs: [inputs.batonHome, homes.codexHome, homes.claudeConfigDir],
        runTag,
      })
    : undefined;
  const dispatcher = new Dispatcher({
    ...(approvals ? { approvals } : {}),
    pressClaims,
    pressSettler: new PressSettler({ claims: pressClaims, adapters, logger }),
    config,
    store,
    outbox,
    supervisor,
    clock,
    logger,
    vendors: installed,
    homeDir: inputs.homeDir,
    runsDir,
    protectedDirs: [inputs.batonHome, homes.codexHome, homes.claudeConfigDir],
    worktreesDir: join(inputs.batonHome, 'worktrees'),
    ...(inputs.doctor ? { doctor: inputs.doctor } : {}),
    ...(inputs.nodes ? { nodes: inputs.nodes } : {}),
    ...(inputs.fleet ? { fleet: inputs.fleet } : {}),
    configPerCommand: inputs.configPerCommand ?? false,
    ...(inputs.queueScope ? { queueScope: inputs.queueScope } : {}),
    ...(inputs.liveConfig ? { liveConfig: inputs.liveConfig } : {}),
    ...(inputs.restartHow ? { restartHow: inputs.restartHow } : {}),
  });
  supervisor.onRunEnded = () => void dispatcher.startQueued();
  return {
    database,
    store,
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

/** How a run's permission-prompt server is started: this node, baton's server script, the run's token and the port. */
function approvalServerFor(
  approvalPort: { port?: number },
  batonHome: string,
): NonNullable<SupervisorDeps['approvalServer']> {
  return (runId, token) => {
    if (approvalPort.port === undefined) {
      throw new BatonError(
        'approvals_unavailable',
        'Tool approvals need the service’s HTTP port, which is not open yet. Send the command again in a moment.',
      );
    }
    return {
      command: process.execPath,
      args: [fileURLToPath(APPROVAL_SERVER_SCRIPT)],
      env: {
        BATON_APPROVAL_RUN_ID: runId,
        BATON_APPROVAL_TOKEN: token,
        BATON_APPROVAL_URL: `http://127.0.0.1:${approvalPort.port}`,
        BATON_SERVICE_STATE: serviceStatePath(batonHome),
      },
    };
  };
}
