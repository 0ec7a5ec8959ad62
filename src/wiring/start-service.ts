/**
 * `baton start`'s start-up, step by step: log, service lock, core, recovery of what a previous
 * process left, background timers, the fleet's node row, the control API, channels, delivery
 * worker and banner. Each step registers how to release what it opened before the next runs.
 */
import { voiceSecretValues } from './voice.js';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { preloadChannels, type StartedChannels } from '../channels/start.js';
import { secretValues } from '../config/index.js';
import { LiveConfig, restartHow } from '../config/live.js';
import type { ServiceInputs } from '../config/service-inputs.js';
import { systemClock, type Clock } from '../core/clock.js';
import { createServiceLogger, type Logger, type ServiceLogger } from '../core/logger.js';
import { isProcessAlive } from '../core/process.js';
import { UndoStack } from '../core/undo.js';
import { startDeliveryWorker } from '../delivery/worker.js';
import { formatDoctorTable, type DoctorReport } from '../doctor/index.js';
import { stopLeftoversOfLostRuns } from '../fleet/node-loss.js';
import { describeNodes, localBatonProcess, NodeRegistry } from '../fleet/nodes.js';
import { startControlApi, type ControlApi } from '../service/control-api/server.js';
import { startConsoleListener } from '../service/console/listener.js';
import { acquireServiceLock } from '../service/lock.js';
import type { DeliveryRow } from '../store/schema.js';
import { TerminalConversations } from '../terminal/conversations.js';
import { serveAsk } from '../terminal/service-ask.js';
import { serviceBanner } from './banner.js';
import { CHANNELS, channelEnv, startServiceChannels } from './channels.js';
import { serviceDoctorReport } from './doctor-report.js';
import { buildConsole } from './console.js';
import { buildRuntime, type Runtime } from './runtime.js';
import { startArtifactSweepTimer } from './timers/artifact-sweep.js';
import { startNodeLossTimer } from './timers/node-loss.js';
import { reconcileOrphans, startReconcileTimer } from './timers/reconcile.js';
import { watchRoutedRuns } from './timers/routed-poll.js';
import { startScheduleTimer } from './timers/schedules.js';
import { scheduleStartupGc } from './timers/startup-gc.js';
import { startWorktreePruneTimer } from './timers/worktree-prune.js';
import { KILL_GRACE_MS } from './vendors.js';

/** A running service. */
export interface Service {
  stop(): Promise<void>;
  /** Replaces the PostgreSQL pool after a driver fault (`Database.recycle`). */
  recycleDatabase(): Promise<void>;
  banner: string[];
}

/** Options of {@link startService}. */
export interface StartOptions {
  inputs: ServiceInputs;
  logger?: Logger;
  clock?: Clock;
  /** Where banner lines go. @default console.log */
  print?: (line: string) => void;
  /**
   * Called once the database is open and migrated, before reconciliation: from here start-up may
   * launch runs (queued ones) and connect channels, so a stop request waits for it to finish.
   */
  onDatabaseOpen?: () => void;
}

/**
 * Starts baton: storage, reconciliation, channels, delivery worker. A channel that fails to start
 * is reported and retried; it never stops the service.
 *
 * @throws BatonError `database_unavailable`, `migration_failed`.
 */
export async function startService(options: StartOptions): Promise<Service> {
  const undo = new UndoStack();
  try {
    return await startServiceSteps(options, undo);
  } catch (err) {
    // Whatever this attempt opened is released, so a caller may start again in this process
    // (src/cli/start-attempts.ts does after a lost database connection) or exit cleanly.
    await undo.run();
    throw err;
  }
}

/** What start-up has built so far, shared by its steps. */
interface Started {
  inputs: ServiceInputs;
  clock: Clock;
  logger: Logger;
  serviceLogger: ServiceLogger | undefined;
  undo: UndoStack;
}

/** {@link startService}'s steps; each resource it opens registers its release in `undo` first. */
async function startServiceSteps(options: StartOptions, undo: UndoStack): Promise<Service> {
  const { inputs } = options;
  const { env, config } = inputs;
  const clock = options.clock ?? systemClock;
  const serviceLogger = options.logger
    ? undefined
    : await createServiceLogger(env.logLevel, join(inputs.batonHome, 'logs'), [
        ...secretValues(env),
        ...voiceSecretValues(config, inputs.rawEnv),
      ]);
  const logger = options.logger ?? serviceLogger!.logger;
  undo.push('log file', () => serviceLogger?.close());
  undo.onError = (what, err) => logger.error({ err }, `start-up failed; could not release the ${what}`);
  const print = options.print ?? ((line: string) => console.log(line));
  const started: Started = { inputs, clock, logger, serviceLogger, undo };

  // Before anything of the home is touched: a second service on it is refused (service/lock.ts).
  const lock = await acquireServiceLock({
    batonHome: inputs.batonHome,
    host: hostname(),
    isLocalBaton: localBatonProcess,
  });
  undo.push('service lock', () => lock.release());
  print(`baton: starting (${env.databaseUrl ? 'PostgreSQL' : 'embedded database'})…`);
  preloadChannels(CHANNELS, channelEnv(env));
  const core = await openCore(started, options.onDatabaseOpen);
  const { runtime, live } = core;
  const orphanMessages = await recoverFromLastProcess(started, runtime);
  const stopReconcile = startReconcileTimer(runtime, clock, logger);
  undo.push('reconcile timer', stopReconcile);
  runtime.supervisor.watchCancelRequests();
  const { store, runsDir, host } = runtime;
  const sweepDeps = { store, runsDir, host, batonHome: inputs.batonHome, config, clock, logger };
  const stopSweep = startArtifactSweepTimer(sweepDeps);
  const stopPrune = startWorktreePruneTimer(sweepDeps);
  undo.push('sweep timer', () => {
    stopSweep();
    stopPrune();
  });
  const fleet = await joinFleet(started, runtime, live);
  core.fleet.current = fleet.registry;
  // The HTTP port opens before the channels start and queued runs resume: a claude run that a
  // replayed event or the queue starts asks its approvals there (approvals_unavailable otherwise).
  const control = await openControlApi(started, runtime, () => core.report());
  core.approvalPort.port = control.port;
  const channels = await startServiceChannels({ env, config, runtime, fleet: fleet.registry, clock, logger });
  undo.push('channels', () => channels.stop());
  for (const row of orphanMessages) await runtime.outbox.attempt(row);
  // Queued runs stayed queued across the restart; those whose slot is free start now that the
  // channels can carry their messages.
  await runtime.dispatcher.startQueued();
  core.report = () => serviceDoctorReport({ inputs, live, runtime, channels, fleet: fleet.registry, clock });
  const worker = startDeliveryWorker({ store: runtime.store, outbox: runtime.outbox, clock, logger });
  undo.push('delivery worker', () => worker.stop());

  const banner = await serviceBanner({ inputs, runtime, channels, fleet: fleet.registry, controlPort: control.port });
  for (const line of banner) print(line);
  // The log file opens now, off the start path: its lines so far wait in memory until then.
  serviceLogger?.openFile().catch(() => undefined); // openFile logged the failure to stdout
  const cancelStartupGc = scheduleStartupGc(logger);

  let stopping: Promise<void> | undefined;
  return {
    banner,
    recycleDatabase: () => runtime.database.recycle(),
    stop: () => {
      stopping ??= (async () => {
        await control.close();
        cancelStartupGc();
        fleet.stopTimers();
        await fleet.routed
          .unlisten?.()
          .catch((err: unknown) => logger.warn({ err }, 'could not end the LISTEN for routed runs'));
        stopReconcile();
        stopSweep();
        stopPrune();
        await stopChannelsAndCore(channels, runtime, worker);
        await fleet.registry.stop();
        await runtime.database.close();
        await lock.release();
        await serviceLogger?.close();
      })();
      return stopping;
    },
  };
}

/** The core of the service and what later steps fill in for it. */
interface ServiceCore {
  runtime: Runtime;
  live: LiveConfig;
  /** Set once the control API listens: the per-run permission-prompt servers reach it there. */
  approvalPort: { port?: number };
  /** The fleet's registry, set once this node's row exists. */
  fleet: { current?: NodeRegistry };
  /** /doctor in chat and GET /health/ready share one report; it needs the channels, built later. */
  report: () => Promise<DoctorReport>;
}

/** Reads the live config and builds the core (opens the database, waiting for it under systemd). */
async function openCore(started: Started, onDatabaseOpen: (() => void) | undefined): Promise<ServiceCore> {
  const { inputs, clock, logger, undo } = started;
  const { env, config, rawEnv } = inputs;
  // config.toml edits while running: consent and roots apply on the next command; the rest
  // (and a file that does not validate) is reported by doctor with how to restart.
  const restart = restartHow({
    underSystemd: Boolean(rawEnv.INVOCATION_ID),
    isRoot: process.getuid?.() === 0,
    pid: process.pid,
  });
  const live = new LiveConfig({
    configPath: inputs.configPath,
    homeDir: inputs.homeDir,
    config,
    logger,
    restartHow: restart,
  });
  await live.refresh();
  const later: Pick<ServiceCore, 'approvalPort' | 'fleet' | 'report'> = {
    approvalPort: {},
    fleet: {},
    report: () => Promise.reject(new Error('the service is still starting')),
  };
  const { fleet } = later;
  const runtime = await buildRuntime({
    liveConfig: live,
    restartHow: restart,
    approvalPort: later.approvalPort,
    env,
    rawEnv,
    config,
    batonHome: inputs.batonHome,
    homeDir: inputs.homeDir,
    clock,
    logger,
    doctor: async () => formatDoctorTable(await later.report()),
    nodes: async () => (fleet.current ? describeNodes(await fleet.current.list()) : []),
    fleet: {
      name: config.node.name,
      list: async () => (fleet.current ? fleet.current.list() : []),
      get instance() {
        return fleet.current?.instance;
      },
    },
    // Under systemd a database that is still starting (or briefly away) is waited for here, one
    // line per attempt in the journal, rather than a restart loop.
    openRetry: { say: (line) => console.error(line), nowMs: () => clock.nowMs() },
  });
  undo.push('database', () => runtime.database.close());
  onDatabaseOpen?.();
  undo.push('status editor', () => runtime.statusEditor.stop());
  undo.push('run supervisor', () => runtime.supervisor.shutdown());
  // The same object: the steps that fill in the port, the fleet and the report reach the closures above.
  return Object.assign(later, { runtime, live });
}

/**
 * Ends what a previous service process on this host left behind: its orphaned runs (their
 * messages are returned, to be sent once the channels are up), approvals nobody waits for, and
 * inbound events it claimed but never answered.
 */
async function recoverFromLastProcess(started: Started, runtime: Runtime): Promise<DeliveryRow[]> {
  const { clock, logger } = started;
  const { store, host } = runtime;
  const orphanMessages = await reconcileOrphans(runtime, clock, logger, true);
  // Approvals whose run ended while no service ran are closed: nobody waits for them.
  const closedApprovals = await runtime.approvalStore.closeGone(clock.now());
  if (closedApprovals > 0) logger.info({ approvals: closedApprovals }, 'closed tool approvals whose run is gone');
  // Inbound events a dead process on this host claimed but never answered go back to the inbox
  // (an earlier process may have had our pid), to be handled when the channels start.
  await store.inbox.releaseInboundClaims(`${host}:`, (claimant) => {
    const pid = Number(claimant.slice(host.length + 1));
    return pid === process.pid || !Number.isInteger(pid) || !isProcessAlive(pid);
  });
  return orphanMessages;
}

/** This node in the fleet: its row, the leftovers of its lost runs, and the fleet's timers. */
interface FleetMembership {
  registry: NodeRegistry;
  routed: Awaited<ReturnType<typeof watchRoutedRuns>>;
  /** Stops the node-loss timer and the routed-runs poll. */
  stopTimers(): void;
}

/**
 * Writes this process's row in the fleet's nodes table (with one database shared by several
 * nodes, only one of them polls each bot token: a lease in the database), stops what may still
 * run of this host's runs another node ended `node_lost`, and starts the fleet's timers.
 */
async function joinFleet(started: Started, runtime: Runtime, live: LiveConfig): Promise<FleetMembership> {
  const { inputs, clock, logger, undo } = started;
  const { config } = inputs;
  const registry = new NodeRegistry({
    db: runtime.database.db,
    name: config.node.name,
    roots: () => live.current.workspace.roots,
    heartbeatMs: config.node.heartbeatMs,
    deadAfterMs: config.node.deadAfterMs,
    logger,
  });
  await registry.start();
  undo.push('node row', () => registry.stop());
  // Runs of this host that another node ended `node_lost` while this host was cut off: stop
  // what may still run of them.
  await stopLeftoversOfLostRuns({
    store: runtime.store,
    host: runtime.host,
    killGraceMs: KILL_GRACE_MS,
    cgroups: runtime.cgroups,
    logger,
    since: new Date(clock.nowMs() - 7 * 24 * 3600_000),
  }).catch((err: unknown) => logger.error({ err }, 'could not look for processes of runs declared lost'));
  const stopNodeLoss = startNodeLossTimer(registry, runtime, config.node.heartbeatMs, clock, logger);
  undo.push('node-loss timer', stopNodeLoss);
  const stopSchedules = startScheduleTimer(runtime, runtime.schedules, {
    node: config.node.name,
    intervalMs: config.node.heartbeatMs,
    catchUp: () => live.current.schedules.catchUp,
    clock,
    logger,
  });
  undo.push('schedule timer', stopSchedules);
  const routed = await watchRoutedRuns(registry, runtime, config.node.heartbeatMs, logger);
  undo.push('LISTEN for routed runs', () => routed.unlisten?.());
  undo.push('routed-runs timer', () => routed.stopPoll());
  return {
    registry,
    routed,
    stopTimers: () => {
      stopNodeLoss();
      stopSchedules();
      routed.stopPoll();
    },
  };
}

/**
 * Opens the control API: `baton runs|cancel|stop` and `baton ask` reach this process there when
 * embedded PGlite keeps the database to it (their answers come back through a terminal
 * conversation per call), and so do the per-run permission-prompt servers.
 */
async function openControlApi(
  started: Started,
  runtime: Runtime,
  report: () => Promise<DoctorReport>,
): Promise<ControlApi> {
  const { inputs, clock, logger, undo } = started;
  const { dispatcher, approvals } = runtime;
  const conversations = new TerminalConversations();
  runtime.adapters.set('terminal', conversations.adapter);
  const listen = inputs.config.console.listen;
  const webConsole = buildConsole(
    runtime,
    { batonHome: inputs.batonHome, ...(listen ? { listen } : {}) },
    clock,
    logger,
  );
  undo.push('web console', () => webConsole.close());
  if (listen) {
    const extra = await startConsoleListener(listen, webConsole);
    undo.push('web console listener', () => extra.close());
    logger.info({ listen }, 'web console also listens on [console] listen');
  }
  const control = await startControlApi({
    port: inputs.env.httpPort ?? 0,
    batonHome: inputs.batonHome,
    host: runtime.host,
    startedAt: clock.now(),
    report,
    admin: (text) => conversations.runOwnerCommand(dispatcher, text, () => clock.now()),
    ask: serveAsk({ conversations, dispatcher, store: runtime.store, clock, logger }),
    ...(approvals
      ? {
          approvals: {
            authorize: (runId, token) => approvals.authorize(runId, token),
            request: (run, request, signal) => approvals.request(run, request, signal),
          },
        }
      : {}),
    console: webConsole,
    logger,
  });
  undo.push('health server', () => control.close());
  return control;
}

/** The stop order's middle: channels first (no new work), then runs, status edits and delivery. */
async function stopChannelsAndCore(
  channels: StartedChannels,
  runtime: Runtime,
  worker: { stop(): Promise<void> },
): Promise<void> {
  await channels.stop();
  await runtime.supervisor.shutdown();
  runtime.statusEditor.stop();
  await worker.stop();
}
