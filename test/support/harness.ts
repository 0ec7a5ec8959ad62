/**
 * Builds the dispatcher, supervisor and outbox on a real test database, with the fake codex CLI
 * (or any binary) as the codex vendor and a recording channel, for in-process integration tests.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseConfigToml, type BatonConfig } from '../../src/config/index.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { Dispatcher, type DispatcherDeps } from '../../src/dispatch/dispatcher.js';
import { detectCgroupSupport, type CgroupSupport } from '../../src/harness/run-cgroup.js';
import { outcomeText } from '../../src/wording/runs.js';
import { RunSupervisor, type InstalledVendor, type RunLimits } from '../../src/harness/supervisor.js';
import { claudeVendor } from '../../src/harness/vendors/claude.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';
import type { VendorName } from '../../src/harness/vendors/types.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { RunRow } from '../../src/store/schema.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { harnessWords } from '../../src/wording/harness.js';
import { codexLoginState } from '../../src/doctor/login.js';
import { fileTracer } from '../../src/harness/traces.js';
import type { ChannelAdapter, InboundMessage, Platform } from '../../src/channels/types.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { openTestDatabase, type TestDatabase } from './database.js';

/**
 * Another dispatcher on the harness's store, outbox and supervisor — what a second node, or the
 * same service with other deps (live config, a fleet, another store), would hold: the harness's
 * vendors, config, home and runs directory, the system clock and a silent logger, with
 * `overrides` on top.
 */
export function dispatcherFor(h: TestHarness, overrides: Partial<DispatcherDeps> = {}): Dispatcher {
  return new Dispatcher({
    config: h.config,
    store: h.store,
    outbox: h.outbox,
    supervisor: h.supervisor,
    clock: systemClock,
    logger: silentLogger(),
    vendors: h.vendors,
    homeDir: join(h.dir, 'home'),
    runsDir: h.runsDir,
    ...overrides,
  });
}

/** Path of the fake codex script. */
export const FAKE_CODEX = fileURLToPath(new URL('../fakes/fake-codex.mjs', import.meta.url));

/** Everything a harness test touches. */
export interface TestHarness {
  database: TestDatabase;
  store: RunStore;
  outbox: Outbox;
  supervisor: RunSupervisor;
  dispatcher: Dispatcher;
  /** The vendors the harness's dispatcher runs: the fake codex (or `codexBinary`), and claude when given. */
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  channel: RecordingChannel;
  config: BatonConfig;
  /** Temp dir holding `home/`, `work/` (the one workspace root) and `baton/`. */
  dir: string;
  root: string;
  runsDir: string;
  tracesDir: string;
  dispose(): Promise<void>;
}

/** Options of {@link createHarness}. */
export interface HarnessOptions {
  /** Extra TOML appended to a config with approved = true and `work/` as the only root. */
  configToml?: (paths: { root: string; home: string }) => string;
  /** Replace the whole config TOML. */
  replaceConfig?: (paths: { root: string; home: string }) => string;
  /** The codex executable. @default the fake codex script */
  codexBinary?: string | null;
  /** The claude executable. @default none: claude is not installed */
  claudeBinary?: string;
  limits?: Partial<RunLimits>;
  /** Run cgroups, e.g. `{ unavailable: 'test' }` to follow the process tree. @default detected */
  cgroups?: CgroupSupport;
  /** Extra service env visible to the spawner (only HOME/PATH/TERM/USER are ever passed on). */
  baseEnv?: { PATH?: string; USER?: string | undefined; TERM?: string };
  /**
   * A fresh database the caller opened (e.g. in `beforeEach`, so its cost under load falls in a
   * hook, not in the test's time) and disposes itself. @default one opened here, disposed with the harness
   */
  database?: TestDatabase;
  /** Changes the PostgreSQL URL the harness opens (e.g. through a TCP proxy). */
  rewriteDatabaseUrl?: (url: string) => string;
  /**
   * The adapters the outbox sends through (a map the caller fills once its adapters exist, e.g. a
   * real adapter against a fake platform server). @default the recording channel as `telegram`
   */
  adapters?: Map<Platform, ChannelAdapter>;
}

export async function createHarness(options: HarnessOptions = {}): Promise<TestHarness> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-h-'));
  const root = join(dir, 'work');
  const home = join(dir, 'home');
  await mkdir(root, { recursive: true });
  await mkdir(home, { recursive: true });
  const base = `[harness]\napproved = true\nmax_active = 5\n[workspace]\nroots = [${JSON.stringify(root)}]\n[channels.telegram]\nowner_user_id = "1"\nallowed_user_ids = ["2"]\n`;
  const toml = options.replaceConfig
    ? options.replaceConfig({ root, home })
    : base + (options.configToml?.({ root, home }) ?? '');
  const config = parseConfigToml(toml, { configPath: join(dir, 'config.toml'), homeDir: home });
  const database = options.database ?? (await openTestDatabase(options.rewriteDatabaseUrl));
  const ownsDatabase = options.database === undefined;
  const store = new RunStore(database.db);
  const channel = new RecordingChannel();
  const logger = silentLogger();
  const outbox = new Outbox({
    store,
    clock: systemClock,
    logger,
    adapters: options.adapters ?? new Map([['telegram', channel]]),
    policy: { backoffBaseMs: 30_000, backoffCapMs: 1_800_000, maxAttempts: 20, maxAgeMs: 86_400_000 },
  });
  const vendors = new Map<VendorName, InstalledVendor>();
  const codexBinary = options.codexBinary === undefined ? FAKE_CODEX : options.codexBinary;
  if (codexBinary) vendors.set('codex', { vendor: codexVendor, binaryPath: codexBinary, version: 'fake' });
  if (options.claudeBinary)
    vendors.set('claude', { vendor: claudeVendor, binaryPath: options.claudeBinary, version: 'fake' });
  const runsDir = join(dir, 'baton', 'harness', 'runs');
  const tracesDir = join(dir, 'baton', 'traces');
  const supervisor = new RunSupervisor({
    store,
    outbox,
    clock: systemClock,
    logger,
    vendors,
    homes: { codexHome: join(home, '.codex'), claudeConfigDir: join(home, '.claude') },
    baseEnv: {
      HOME: home,
      PATH: options.baseEnv?.PATH ?? process.env.PATH ?? '/usr/bin:/bin',
      USER: options.baseEnv && 'USER' in options.baseEnv ? options.baseEnv.USER : 'tester',
      TERM: options.baseEnv?.TERM ?? 'xterm',
    },
    runsDir,
    limits: {
      maxEventBytes: 1_048_576,
      maxFramingErrors: 5,
      killGraceMs: 300,
      maxRunArtifactBytes: 64 * 1024 * 1024,
      firstEventMs: 120_000,
      inactivityMs: 600_000,
      finishGraceMs: 10_000,
      exitDrainMs: 2_000,
      maxPatchBytes: 1024 * 1024,
      ...options.limits,
    },
    supervisorId: `${hostname()}:${process.pid}`,
    cancelPollMs: 50,
    cgroups: options.cgroups ?? (await detectCgroupSupport()),
    describeOutcome: outcomeText,
    words: harnessWords,
    codexLoginMissing: async (codexHome) => (await codexLoginState(codexHome)).state === 'not_authenticated',
    tracer: fileTracer(tracesDir, systemClock, logger),
  });
  const dispatcher = new Dispatcher({
    config,
    store,
    outbox,
    supervisor,
    clock: systemClock,
    logger,
    vendors,
    homeDir: home,
    runsDir,
  });
  return {
    database,
    store,
    outbox,
    supervisor,
    dispatcher,
    vendors,
    channel,
    config,
    dir,
    root,
    runsDir,
    tracesDir,
    dispose: async () => {
      await supervisor.shutdown();
      if (ownsDatabase) await database.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

let messageCounter = 0;

/** An inbound Telegram message from `senderId` (private chat unless `isDirect` is false). */
export function inbound(senderId: string, text: string, overrides: Partial<InboundMessage> = {}): InboundMessage {
  messageCounter += 1;
  return {
    platform: 'telegram',
    dedupeKey: `u${process.pid}-${messageCounter}`,
    chatId: senderId,
    isDirect: true,
    messageId: String(1000 + messageCounter),
    senderId,
    senderName: `user ${senderId}`,
    senderIsBot: false,
    text,
    receivedAt: new Date(),
    ...overrides,
  };
}

/** What {@link insertRun} may set; the rest is a codex run from Telegram chat 1 with a 1-minute limit. */
export interface InsertedRunFields {
  /** @default a new run id */
  id?: RunId;
  /** @default 'starting' */
  status?: 'starting' | 'running';
  /** `<host>:<pid>` of the supervising process. @default the harness's own supervisor */
  supervisor?: string;
  /** @default 't' */
  task?: string;
}

/**
 * Records a codex run in `cwd` straight in the store, with its started delivery, as a launch
 * would (no chat command, no spawn): for tests that start a run by hand or leave one orphaned.
 *
 * @returns the run's row as stored.
 */
export async function insertRun(h: TestHarness, cwd: string, fields: InsertedRunFields = {}): Promise<RunRow> {
  const id = fields.id ?? newRunId();
  const now = new Date();
  await h.store.launches.createRun(
    {
      id,
      vendor: 'codex',
      status: fields.status ?? 'starting',
      task: fields.task ?? 't',
      cwd,
      worktreeRoot: cwd,
      options: { timeoutMinutes: 1, progress: false },
      origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '9' },
      supervisor: fields.supervisor ?? h.supervisor.supervisorId,
      createdAt: now,
    },
    { runId: id, kind: 'started', target: { platform: 'telegram', chatId: '1' }, body: `[run ${id}] started` },
    10,
    now,
  );
  return (await h.store.runs.getRun(id))!;
}

/**
 * Makes `h.store.createRun` mark its inbound event handled before its transaction, as another
 * process answering the same event meanwhile would: the launch transaction then fails
 * `duplicate_inbound` after its read found the worktree free.
 *
 * @returns the undo.
 */
export function answerInboundElsewhere(h: TestHarness): () => void {
  const createRun = h.store.launches.createRun.bind(h.store);
  h.store.launches.createRun = (async (...args: Parameters<typeof createRun>) => {
    const key = args[4];
    if (key) await h.store.inbox.markInboundHandled(key.platform, key.dedupeKey);
    return createRun(...args);
  }) as typeof createRun;
  return () => {
    h.store.launches.createRun = createRun;
  };
}
