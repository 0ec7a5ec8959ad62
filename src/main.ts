/**
 * The composition root: load config → open storage → detect CLIs → build deps → start channels.
 * The only module that reads `process.env`.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { preloadChannels, startChannels, type ChannelFactory } from './channels/start.js';
import { discordChannel } from './channels/discord/factory.js';
import { slackChannel } from './channels/slack/factory.js';
import { telegramChannel } from './channels/telegram/factory.js';
import { TerminalAdapter } from './channels/terminal/adapter.js';
import { followText } from './cli/ask-queue.js';
import { localAttachment } from './channels/terminal/local-file.js';
import {
  defaultConfigPath,
  ensureConfigFile,
  loadConfig,
  mergeEnv,
  parseEnv,
  readDotEnvFiles,
  resolveBatonHome,
  secretValues,
  type BatonConfig,
  type BatonEnv,
} from './config/index.js';
import { workspaceWarnings } from './config/workspace-check.js';
import { LiveConfig, restartHow } from './config/live.js';
import { systemClock, type Clock } from './core/clock.js';
import { isProcessAlive } from './core/process.js';
import { collectGarbageNow } from './core/memory.js';
import { UndoStack } from './core/undo.js';
import { createServiceLogger, type Logger } from './core/logger.js';
import { startDeliveryWorker, type DeliveryWorker } from './delivery/worker.js';
import { collectDoctorReport, formatDoctorTable, type DoctorReport } from './doctor/index.js';
import { startHealthServer } from './health.js';
import type { Detection } from './harness/detect.js';
import { reconcileOrphanedRuns } from './harness/reconcile.js';
import { PasteJoiner } from './dispatch/paste-joiner.js';
import { overtakesConversation } from './dispatch/overtaking.js';
import type { InboundMessage } from './channels/types.js';
import { sweepArtifacts } from './harness/retention.js';
import { pruneWorktrees } from './harness/worktrees.js';
import { buildRuntime, KILL_GRACE_MS, VENDORS } from './runtime.js';
import { DatabaseLease, leaseKey } from './fleet/lease.js';
import { RUNS_CHANNEL } from './store/runs-repo.js';
import { describeNodes, localBatonProcess, NodeRegistry } from './fleet/nodes.js';
import { acquireServiceLock } from './service-lock.js';
import { reconcileLostNodes, stopLeftoversOfLostRuns } from './fleet/node-loss.js';
import { askReport } from './cli/ask.js';
import { installedUnitDelegation } from './cli/service.js';
import { describeDatabaseKind, type Database } from './store/database.js';
import type { DeliveryRow } from './store/schema.js';

/** Chat platforms this build can talk to, in banner order. */
const CHANNELS: readonly ChannelFactory[] = [telegramChannel, slackChannel, discordChannel];
/** How often expired artifacts are swept, in ms (daily). */
const SWEEP_INTERVAL_MS = 24 * 3_600_000;
/** How often a `baton ask` served here checks whether its run has ended, in ms. */
const ASK_POLL_MS = 200;
/** How long after `baton ready` start-up's garbage is collected, in ms. */
const STARTUP_GC_DELAY_MS = 1_000;
/** Bytes → MB with one decimal, for log fields. */
const toMb = (bytes: number): number => Math.round(bytes / 104_857.6) / 10;
/** How often to look for runs orphaned by a dead service process, in ms. */
const RECONCILE_INTERVAL_MS = 60_000;

/** Where the service's settings come from. */
export interface ServiceInputs {
  env: BatonEnv;
  rawEnv: Readonly<Record<string, string | undefined>>;
  batonHome: string;
  homeDir: string;
  configPath: string;
  config: BatonConfig;
  wroteConfig: boolean;
  /** The `.env` files that existed and were read (absolute paths; today at most `$BATON_HOME/.env`). */
  envFiles: string[];
}

/**
 * Reads `.env` files (see {@link loadPaths}; the real environment wins), validates the
 * environment, writes a starter config on first start and loads it.
 *
 * @throws BatonError `env_invalid`, `config_invalid`, `config_unreadable`.
 */
export async function loadInputs(
  processEnv: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ServiceInputs> {
  const paths = await loadPaths(processEnv);
  const wroteConfig = await ensureConfigFile(paths.configPath);
  const { config } = await loadConfig({ configPath: paths.configPath, homeDir: paths.homeDir });
  return { ...paths, config, wroteConfig };
}

/** Where things are, without loading the config (for commands that edit or diagnose it). */
export type ServicePaths = Omit<ServiceInputs, 'config' | 'wroteConfig'>;

/**
 * Reads the environment and `$BATON_HOME/.env`, and resolves `$BATON_HOME` and the config path.
 *
 * `$BATON_HOME/.env` is the only `.env` file baton reads, and `BATON_HOME` itself comes from the
 * real environment only. Never the working directory: `baton ask` runs inside repositories, and a
 * repository's `.env` is untrusted input that could otherwise move `BATON_HOME` (a different
 * config, consent and roots) or `CODEX_HOME` (another model endpoint). The real
 * environment wins over the file.
 *
 * @throws BatonError `env_invalid`, `config_unreadable` (a `.env` that exists but cannot be read).
 */
export async function loadPaths(
  processEnv: Readonly<Record<string, string | undefined>> = process.env,
): Promise<ServicePaths> {
  const homeDir = processEnv.HOME || homedir();
  const batonHome = resolveBatonHome(parseEnv({ BATON_HOME: processEnv.BATON_HOME }), homeDir);
  const envFile = join(batonHome, '.env');
  const rawEnv = mergeEnv(await readDotEnvFiles([envFile]), processEnv);
  const env = parseEnv(rawEnv);
  const envFiles = existsSync(envFile) ? [envFile] : [];
  return { env, rawEnv, batonHome, homeDir, configPath: defaultConfigPath(batonHome), envFiles };
}

/** A running service. */
export interface Service {
  stop(): Promise<void>;
  /** Replaces the PostgreSQL pool after a driver fault ({@link Database.recycle}). */
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

/** {@link startService}'s steps; each resource it opens registers its release in `undo` first. */
async function startServiceSteps(options: StartOptions, undo: UndoStack): Promise<Service> {
  const { inputs } = options;
  const { env, config, rawEnv } = inputs;
  const clock = options.clock ?? systemClock;
  const serviceLogger = options.logger
    ? undefined
    : await createServiceLogger(env.logLevel, join(inputs.batonHome, 'logs'), secretValues(env));
  const logger = options.logger ?? serviceLogger!.logger;
  undo.push('log file', () => serviceLogger?.close());
  undo.onError = (what, err) => logger.error({ err }, `start-up failed; could not release the ${what}`);
  const print = options.print ?? ((line: string) => console.log(line));

  // Before anything of the home is touched: a second service on it is refused (service-lock.ts).
  const lock = await acquireServiceLock({
    batonHome: inputs.batonHome,
    host: hostname(),
    isLocalBaton: localBatonProcess,
  });
  undo.push('service lock', () => lock.release());
  print(`baton: starting (${env.databaseUrl ? 'PostgreSQL' : 'embedded database'})…`);
  preloadChannels(CHANNELS, env);
  // /doctor in chat and GET /health/ready share one report; it needs the channels, built later.
  let report: () => Promise<DoctorReport> = () => Promise.reject(new Error('the service is still starting'));
  let fleet: NodeRegistry | undefined;
  // Set once the health server listens: the per-run permission-prompt servers reach it there.
  const approvalPort: { port?: number } = {};
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
  const runtime = await buildRuntime({
    liveConfig: live,
    restartHow: restart,
    approvalPort,
    env,
    rawEnv,
    config,
    batonHome: inputs.batonHome,
    homeDir: inputs.homeDir,
    clock,
    logger,
    doctor: async () => formatDoctorTable(await report()),
    nodes: async () => (fleet ? describeNodes(await fleet.list()) : []),
    fleet: {
      name: config.node.name,
      list: async () => (fleet ? fleet.list() : []),
      get instance() {
        return fleet?.instance;
      },
    },
    // Under systemd a database that is still starting (or briefly away) is waited for here, one
    // line per attempt in the journal, rather than a restart loop.
    openRetry: { say: (line) => console.error(line), nowMs: () => clock.nowMs() },
  });
  const { database, store, outbox, supervisor, dispatcher, adapters, detections, host } = runtime;
  undo.push('database', () => database.close());
  options.onDatabaseOpen?.();
  undo.push('status editor', () => runtime.statusEditor.stop());
  undo.push('run supervisor', () => supervisor.shutdown());

  // At start and every minute: runs whose service process on this host died are stopped and
  // reported, so a crashed sibling never holds a worktree lock for good.
  const reconcile = (startup: boolean): Promise<DeliveryRow[]> =>
    reconcileOrphanedRuns({
      store,
      clock,
      logger,
      vendors: new Map(VENDORS.map((v) => [v.name, v])),
      host,
      isAlive: isProcessAlive,
      isSupervisedHere: (runId) => supervisor.supervises(runId),
      startup,
      killGraceMs: KILL_GRACE_MS,
      cgroups: runtime.cgroups,
      runsDir: runtime.runsDir,
    });
  // Their messages are sent once the channels are up.
  const orphanMessages = await reconcile(true);
  // Approvals whose run ended while no service ran are closed: nobody waits for them.
  const closedApprovals = await runtime.approvalStore.closeGone(clock.now());
  if (closedApprovals > 0) logger.info({ approvals: closedApprovals }, 'closed tool approvals whose run is gone');
  // Inbound events a dead process on this host claimed but never answered go back to the inbox
  // (an earlier process may have had our pid), to be handled when the channels start.
  await store.inbox.releaseInboundClaims(`${host}:`, (claimant) => {
    const pid = Number(claimant.slice(host.length + 1));
    return pid === process.pid || !Number.isInteger(pid) || !isProcessAlive(pid);
  });
  const reconcileTimer = setInterval(() => {
    reconcile(false)
      .then(async (rows) => {
        for (const row of rows) await outbox.attempt(row);
      })
      .catch((err: unknown) => logger.error({ err }, 'reconciling orphaned runs failed'))
      // Queued runs whose slot is free start here even if the process that freed it died.
      .finally(() => dispatcher.startQueued());
  }, RECONCILE_INTERVAL_MS);
  reconcileTimer.unref();
  undo.push('reconcile timer', () => clearInterval(reconcileTimer));
  supervisor.watchCancelRequests();
  const sweep = (): void => {
    sweepArtifacts({
      runsDir: runtime.runsDir,
      tracesDir: join(inputs.batonHome, 'traces'),
      retentionMs: config.harness.artifactRetentionMs,
      store,
      clock,
      logger,
    }).catch((err: unknown) => logger.error({ err }, 'retention sweep failed'));
  };
  const pruneTimer = (): void => {
    pruneWorktrees({
      store,
      clock,
      logger,
      retentionMs: config.workspace.worktreeRetentionMs,
      node: { name: config.node.name, host },
    }).catch((err: unknown) => logger.error({ err }, 'worktree retention failed'));
  };
  sweep();
  pruneTimer();
  const sweepTimer = setInterval(() => {
    sweep();
    pruneTimer();
  }, SWEEP_INTERVAL_MS);
  sweepTimer.unref();
  undo.push('sweep timer', () => clearInterval(sweepTimer));

  // This process's row in the fleet's nodes table; with one database shared by
  // several nodes, only one of them polls each bot token (a lease in the database).
  fleet = new NodeRegistry({
    db: database.db,
    name: config.node.name,
    roots: () => live.current.workspace.roots,
    heartbeatMs: config.node.heartbeatMs,
    deadAfterMs: config.node.deadAfterMs,
    logger,
  });
  await fleet.start();
  const startedFleet = fleet;
  undo.push('node row', () => startedFleet.stop());
  // Runs of this host that another node ended `node_lost` while this host was cut off: stop
  // what may still run of them.
  await stopLeftoversOfLostRuns({
    store,
    host,
    killGraceMs: KILL_GRACE_MS,
    cgroups: runtime.cgroups,
    logger,
    since: new Date(clock.nowMs() - 7 * 24 * 3600_000),
  }).catch((err: unknown) => logger.error({ err }, 'could not look for processes of runs declared lost'));
  const registry = fleet;
  const nodeLossTimer = setInterval(
    () => {
      reconcileLostNodes({ registry, store, clock, logger, vendors: new Map(VENDORS.map((v) => [v.name, v])) })
        .then(async (rows) => {
          for (const row of rows) await outbox.attempt(row);
        })
        .catch((err: unknown) => logger.error({ err }, 'reconciling lost nodes failed'));
    },
    Math.max(1_000, config.node.heartbeatMs),
  );
  nodeLossTimer.unref();
  undo.push('node-loss timer', () => clearInterval(nodeLossTimer));
  // Runs other nodes route here: woken by NOTIFY at once, and found by a poll
  // every heartbeat when a notification is missed (or on a database without LISTEN).
  const wakeForRoutedRuns = (payload: string): void => {
    if (payload === registry.name) void dispatcher.startQueued();
  };
  const unlisten = database.listen
    ? await database.listen(RUNS_CHANNEL, wakeForRoutedRuns).catch((err: unknown) => {
        logger.warn({ err }, 'could not LISTEN for routed runs; polling for them every heartbeat instead');
        return undefined;
      })
    : undefined;
  const routedTimer = setInterval(
    () => {
      store.queue
        .hasQueuedFor(registry.name, registry.instance)
        .then((waiting) => (waiting ? dispatcher.startQueued() : undefined))
        .catch((err: unknown) => logger.warn({ err }, 'could not look for runs routed to this node'));
    },
    Math.max(1_000, config.node.heartbeatMs),
  );
  routedTimer.unref();
  undo.push('LISTEN for routed runs', () => unlisten?.());
  undo.push('routed-runs timer', () => clearInterval(routedTimer));

  // `baton runs|cancel|stop` reach this process through the health server when embedded PGlite
  // keeps the database to it; their answers come back through a terminal conversation per call.
  const adminReplies = new Map<string, string[]>();
  const askListeners = new Map<string, (text: string) => void>();
  adapters.set(
    'terminal',
    new TerminalAdapter((text, chatId) => {
      adminReplies.get(chatId)?.push(text);
      askListeners.get(chatId)?.(text);
    }),
  );
  const admin = async (text: string): Promise<string[]> => {
    const chatId = `admin-${randomUUID()}`;
    adminReplies.set(chatId, []);
    try {
      await dispatcher.handle({
        platform: 'terminal',
        dedupeKey: chatId,
        chatId,
        isDirect: true,
        messageId: chatId,
        senderId: 'owner',
        senderName: 'baton CLI',
        senderIsBot: false,
        text,
        receivedAt: clock.now(),
      });
      return adminReplies.get(chatId) ?? [];
    } finally {
      adminReplies.delete(chatId);
    }
  };
  // `baton ask` with embedded PGlite: the run is this process's, its messages stream back.
  const ask = async (
    text: string,
    files: readonly string[],
    onMessage: (text: string) => void,
    gone: AbortSignal,
    options?: { noWait?: boolean },
  ): Promise<Record<string, unknown>> => {
    const chatId = `ask-${randomUUID()}`;
    const messages: string[] = [];
    askListeners.set(chatId, (message) => {
      messages.push(message);
      onMessage(message);
    });
    try {
      const result = await dispatcher.handle({
        platform: 'terminal',
        dedupeKey: chatId,
        chatId,
        isDirect: true,
        messageId: 'ask',
        senderId: 'owner',
        senderName: 'baton ask',
        senderIsBot: false,
        text,
        // The owner's own files, named with `baton ask --file` (the admin token proves the owner).
        ...(files.length > 0 ? { attachments: files.map(localAttachment) } : {}),
        receivedAt: clock.now(),
      });
      if (result.kind !== 'launched')
        return { status: 'refused', code: result.kind === 'refused' ? result.code : result.kind, messages };
      const runId = result.runId;
      if (options?.noWait && (await store.runs.getRun(runId))?.status === 'queued') {
        return { runId, status: 'queued', follow: followText(runId, true), messages };
      }
      // Queued or active: a client gone before the run ended drops it, as /cancel would.
      const cancel = (): void =>
        void dispatcher
          .cancelOwn(runId)
          .catch((err: unknown) => logger.warn({ err, runId }, 'could not cancel the run of an ask that went away'));
      if (gone.aborted) cancel();
      else gone.addEventListener('abort', cancel, { once: true });
      // Wait for the run to end and its messages to go out (a condition, polled; no deadline).
      for (;;) {
        const run = await store.runs.getRun(runId);
        // A queued run waits for its turn, which this service gives it (its queue runner).
        const ended =
          run !== undefined && run.status !== 'queued' && run.status !== 'starting' && run.status !== 'running';
        if (ended && (await store.outbox.deliveriesOfRun(runId)).every((d) => d.status !== 'pending')) {
          gone.removeEventListener('abort', cancel);
          return askReport(runId, run, messages) as unknown as Record<string, unknown>;
        }
        await sleep(ASK_POLL_MS);
      }
    } finally {
      askListeners.delete(chatId);
    }
  };
  // The HTTP port opens before the channels start and queued runs resume: a claude run that a
  // replayed event or the queue starts asks its approvals there (approvals_unavailable otherwise).
  const approvals = runtime.approvals;
  const health = await startHealthServer({
    port: env.httpPort ?? 0,
    batonHome: inputs.batonHome,
    host,
    startedAt: clock.now(),
    report: () => report(),
    admin,
    ask,
    ...(approvals
      ? {
          approvals: {
            authorize: (runId, token) => approvals.authorize(runId, token),
            request: (run, request, signal) => approvals.request(run, request, signal),
          },
        }
      : {}),
    logger,
  });
  undo.push('health server', () => health.close());
  approvalPort.port = health.port;
  // A long paste the chat app split into several messages reaches the dispatcher as one.
  // `/stop` and `/cancel` overtake a conversation's launch only while it downloads its files;
  // otherwise they keep their place (`/codex …` then `/stop` stops that run).
  const overtakes = (message: InboundMessage): boolean =>
    overtakesConversation(message) && dispatcher.downloadsPending(message);
  const pastes = new PasteJoiner({
    handle: (message) => dispatcher.handle(message),
    waitMs: config.harness.pasteJoinMs,
    logger,
    overtakes,
  });
  const channels = await startChannels(
    CHANNELS,
    (message) => pastes.handle(message),
    {
      env,
      config,
      clock,
      logger,
      inbox: {
        recordInbox: (platform, updates) => store.inbox.recordInbox(platform, updates),
        receivedInbound: (platform) => store.inbox.receivedInbound(platform),
        forgetInbound: (platform, dedupeKey) => store.inbox.forgetInbound(platform, dedupeKey),
        releaseOwnClaims: (platform, inFlight) =>
          store.inbox.releaseClaimsOf(platform, supervisor.supervisorId, inFlight),
      },
      conversations: store.conversations,
      lease: (platform, token) =>
        new DatabaseLease({
          db: database.db,
          key: leaseKey(platform, token),
          holder: fleet.instance,
          nodeName: fleet.name,
          logger,
        }),
      notifyOwner: (platform, text) => {
        // A private chat with a Telegram user has the user's id as its chat id.
        const owner = config.channels[platform].owner;
        if (!owner) return;
        void outbox
          .send({ runId: null, kind: 'notice', target: { platform, chatId: owner }, body: text })
          .catch((err: unknown) => logger.error({ err, platform }, 'could not tell the owner'));
      },
      presses: async (press) => void (await dispatcher.handlePress(press)),
      overtakes,
    },
    adapters,
  );
  undo.push('channels', () => channels.stop());
  for (const row of orphanMessages) await outbox.attempt(row);
  // Queued runs stayed queued across the restart; those whose slot is free start now that the
  // channels can carry their messages.
  await dispatcher.startQueued();
  report = async () => {
    await live.refresh();
    const changed = live.describe();
    return collectDoctorReport({
      now: clock.now(),
      homeDir: inputs.homeDir,
      batonHome: inputs.batonHome,
      config: {
        path: inputs.configPath,
        result: { config: live.current, exists: true },
        envFile: { path: join(inputs.batonHome, '.env'), loaded: inputs.envFiles.length > 0 },
        ...(changed ? { changedSinceStart: changed } : {}),
      },
      env: {
        PATH: rawEnv.PATH ?? '',
        CODEX_HOME: env.codexHome,
        CLAUDE_CONFIG_DIR: env.claudeConfigDir,
        passable: rawEnv,
      },
      // An unreachable database is a row of the report (and a 503), not a failed report.
      database: await store.outbox.counts().then(
        (counts) => ({ kind: database.kind, note: database.note, migrationsCurrent: true, counts }),
        (err: unknown) => ({
          error: `the database stopped answering: ${err instanceof Error ? err.message : String(err)}`,
        }),
      ),
      channels: channels.probes(),
      nodes: await fleet.list().catch((err: unknown) => ({ error: err instanceof Error ? err.message : String(err) })),
      startedWith: detections,
      runCgroups: { support: runtime.cgroups, unit: await installedUnitDelegation(inputs.homeDir) },
      secrets: secretValues(env),
    });
  };
  const worker: DeliveryWorker = startDeliveryWorker({ store, outbox, clock, logger });
  undo.push('delivery worker', () => worker.stop());

  const banner = [
    `baton started (pid ${process.pid})`,
    `  home: ${inputs.batonHome}${inputs.wroteConfig ? ` (wrote a starter ${inputs.configPath})` : ''}`,
    `  config: ${inputs.configPath}`,
    `  database: ${describeDatabase(database)}`,
    ...(await fleet.list().then(
      (list) =>
        list.length > 1 ? ['  nodes:', ...describeNodes(list).map((line) => `    ${line}`)] : [`  node: ${fleet.name}`],
      (err: unknown) => [
        `  node: ${fleet.name} (could not list the fleet: ${err instanceof Error ? err.message : String(err)})`,
      ],
    )),
    `  harness: ${describeHarness(config, detections)}`,
    ...(config.harness.enabled ? (await workspaceWarnings(config)).map((warning) => `  warning: ${warning}`) : []),
    ...channels.lines.map((line) => `  ${line}`),
    `  health: http://127.0.0.1:${health.port}/health/ready`,
    ...(adapters.size > 0
      ? []
      : channels.all.size > 0
        ? ['  no channel is connected yet: see the failures above; baton keeps retrying in the background']
        : [
            '  no channel is configured: set TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN (see .env.example) and restart',
          ]),
    'baton ready',
  ];
  for (const line of banner) print(line);
  // The log file opens now, off the start path: its lines so far wait in memory until then.
  serviceLogger?.openFile().catch(() => undefined); // openFile logged the failure to stdout
  // Start-up leaves dead objects that V8's memory reducer would return only 10–20 s later; one
  // full collection once the channels' first polls have settled returns them now.
  // (Runs and git start their processes with node:child_process: the service never loads execa,
  // which only the doctor and the embedded database's set-up use.)
  const startupGcTimer = setTimeout(() => {
    const freed = collectGarbageNow();
    logger.debug(
      {
        heapUsedMb: toMb(freed.heapUsedAfterBytes),
        freedHeapMb: toMb(freed.heapUsedBeforeBytes - freed.heapUsedAfterBytes),
        rssMb: toMb(freed.rssAfterBytes),
      },
      'start-up garbage collected',
    );
  }, STARTUP_GC_DELAY_MS);
  startupGcTimer.unref();

  let stopping: Promise<void> | undefined;
  return {
    banner,
    recycleDatabase: () => database.recycle(),
    stop: () => {
      stopping ??= (async () => {
        await health.close();
        clearTimeout(startupGcTimer);
        clearInterval(nodeLossTimer);
        clearInterval(routedTimer);
        await unlisten?.().catch((err: unknown) => logger.warn({ err }, 'could not end the LISTEN for routed runs'));
        clearInterval(reconcileTimer);
        clearInterval(sweepTimer);
        await channels.stop();
        await supervisor.shutdown();
        runtime.statusEditor.stop();
        await worker.stop();
        await fleet.stop();
        await database.close();
        await lock.release();
        await serviceLogger?.close();
      })();
      return stopping;
    },
  };
}

function describeDatabase(database: Database): string {
  return database.note
    ? `${describeDatabaseKind(database.kind)} — ${database.note}`
    : describeDatabaseKind(database.kind);
}

function describeHarness(config: BatonConfig, detections: readonly Detection[]): string {
  if (!config.harness.enabled) return 'disabled ([harness] enabled = false)';
  const consent = config.harness.approved
    ? 'approved'
    : 'NOT approved (run `baton approve`; it applies without a restart)';
  const clis = detections.map((d) =>
    'found' in d ? `${d.vendor} ${d.found.version} at ${d.found.binaryPath}` : `${d.vendor}: ${d.missing}`,
  );
  const roots =
    config.workspace.roots.length === 0
      ? 'no workspace roots (run `baton grant path DIR`; it applies without a restart)'
      : `roots ${config.workspace.roots.join(', ')}`;
  return [consent, ...clis, roots].join('; ');
}
