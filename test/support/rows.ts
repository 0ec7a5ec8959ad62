/**
 * Run rows for tests: typed defaults a test overrides field by field, written either through the
 * store's own launch transaction (`createRun`) or, for rows a launch could not produce (a run
 * already ended, a row of another node), inserted directly.
 */
import { newRunId, type RunId } from '../../src/core/ids.js';
import type { Db } from '../../src/store/database.js';
import * as schema from '../../src/store/schema.js';
import type { DeliveryTargetJson, NewRunRow, QueuedLaunchJson } from '../../src/store/schema.js';

/** A run row whose id is a {@link RunId}, as the store's readers type it. */
export type TestRunRow = NewRunRow & { id: RunId };

/**
 * A codex run `starting` in `/repo/app`, launched from Telegram chat `1` (sender `1`, message
 * `10`) by supervisor `testhost:1` now, with a 30-minute timeout and no progress messages.
 * `worktreeRoot` defaults to `cwd`. Nothing is written.
 */
export function runRow(overrides: Partial<NewRunRow> = {}): TestRunRow {
  const cwd = overrides.cwd ?? '/repo/app';
  return {
    id: newRunId(),
    vendor: 'codex',
    status: 'starting',
    task: 'fix the test',
    cwd,
    worktreeRoot: cwd,
    options: { timeoutMinutes: 30, progress: false },
    origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10' },
    supervisor: 'testhost:1',
    createdAt: new Date(),
    ...overrides,
  } as TestRunRow;
}

/** The `started` message a launch writes with its run: to Telegram chat `1`, `[run <id>] started`. */
export interface StartedDelivery {
  runId: RunId;
  kind: 'started';
  target: DeliveryTargetJson;
  body: string;
}

/** The `started` delivery of run `runId`, with `overrides` (e.g. another target or body). */
export function startedDelivery(
  runId: RunId,
  overrides: Partial<Omit<StartedDelivery, 'runId'>> = {},
): StartedDelivery {
  return {
    runId,
    kind: 'started',
    target: { platform: 'telegram', chatId: '1' },
    body: `[run ${runId}] started`,
    ...overrides,
  };
}

/** The part of the store {@link createRunRow} writes through. */
export interface RunCreator {
  launches: {
    createRun(run: NewRunRow, started: StartedDelivery, maxActive: number, now: Date): Promise<unknown>;
  };
}

/**
 * Writes {@link runRow}`(overrides)` with its started delivery through the store's launch
 * transaction, so the same checks apply as to a real launch (the worktree lock, `maxActive`).
 *
 * @returns the row as written.
 * @throws whatever `store.launches.createRun` throws, e.g. when the worktree is taken.
 */
export async function createRunRow(
  store: RunCreator,
  overrides: Partial<NewRunRow> = {},
  { maxActive = 5, now = new Date(), started = {} }: CreateRunOptions = {},
): Promise<TestRunRow> {
  const run = runRow({ createdAt: now, ...overrides });
  await store.launches.createRun(run, startedDelivery(run.id, started), maxActive, now);
  return run;
}

/** How {@link createRunRow} launches its row. */
export interface CreateRunOptions {
  /** The node's limit of active runs the launch is checked against. @default 5 */
  maxActive?: number;
  /** The launch's instant, also the row's `createdAt` unless overridden. @default the wall clock's now */
  now?: Date;
  /** Changes to the {@link startedDelivery} written with the run (its target, its body). */
  started?: Partial<Omit<StartedDelivery, 'runId'>>;
}

/** The part of the store {@link createRoutedRunRow} writes through. */
export interface RoutedRunCreator {
  launches: {
    createRoutedRun(
      run: NewRunRow & { node: string; launch: QueuedLaunchJson },
      sent: StartedDelivery,
      maxActive: number,
      now: Date,
    ): Promise<unknown>;
  };
}

/** Where {@link createRoutedRunRow} routes its run. */
export interface RoutedRun {
  /** The node that took the command. */
  from: string;
  /** The node the run is routed to. */
  to: string;
  /** The directory on `to` the run asked for. */
  target: string;
  /** Whether the run asked for a worktree of its own. @default false */
  worktree?: boolean;
}

/**
 * A codex run with task `success`, queued on node `to` for `target` and not yet placed there
 * (its launch still carries the route), written through the store's routed-launch transaction
 * with its `[run <id>] sent to node <to>` message, as node `from` writes it. One-minute timeout.
 *
 * @returns the row as written.
 */
export async function createRoutedRunRow(
  store: RoutedRunCreator,
  { from, to, target, worktree = false }: RoutedRun,
): Promise<TestRunRow & { node: string; launch: QueuedLaunchJson }> {
  const now = new Date();
  const run = {
    ...runRow({
      status: 'queued',
      task: 'success',
      cwd: target,
      worktreeRoot: `${to}:${target}`,
      options: { timeoutMinutes: 1, progress: false },
      origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '10', node: from },
      supervisor: `${from}host:1`,
      createdAt: now,
    }),
    node: to,
    launch: { prompt: 'success', timeoutMs: 60_000, route: { target, worktree } } as QueuedLaunchJson,
  };
  await store.launches.createRoutedRun(
    run,
    startedDelivery(run.id, { body: `[run ${run.id}] sent to node ${to}` }),
    5,
    now,
  );
  return run;
}

/**
 * Inserts a completed codex run in `/r` whose origin is Telegram chat `chatId`, directly (no
 * launch transaction): for store tests that only need a run to hang deliveries on.
 *
 * @returns the run's id.
 */
export async function insertCompletedRun(db: Db, chatId: string, now: Date): Promise<RunId> {
  const id = newRunId();
  await db.insert(schema.runs).values({
    id,
    vendor: 'codex',
    status: 'completed',
    task: 't',
    cwd: '/r',
    worktreeRoot: '/r',
    options: { timeoutMinutes: 30, progress: false },
    origin: { platform: 'telegram', chatId, senderId: chatId, messageId: '1' },
    supervisor: 'test:1',
    createdAt: now,
  });
  return id;
}
