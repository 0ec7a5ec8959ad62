/**
 * `baton runs [ID]`, `baton cancel ID`, `baton stop`: the owner's commands outside chat.
 * They work on the database directly, so with PostgreSQL they work while the
 * service runs; a cancel is carried out by the service process that supervises the run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { BatonError } from '../core/errors.js';
import { isRunId, type RunId } from '../core/ids.js';
import { formatRun, formatRunList } from '../dispatch/run-views.js';
import { pressRestoreWorktree } from '../dispatch/worktree-gone.js';
import type { ServiceInputs } from '../config/service-inputs.js';
import { openDatabase, type Database } from '../store/database.js';
import { databaseIsShared, embeddedDatabaseExists } from '../store/embedded-postgres.js';
import { RunStore } from '../store/runs-repo.js';
import { ApprovalStore } from '../store/approvals-repo.js';
import type { RunRow } from '../store/schema.js';
import { readServiceState } from '../service/control-api/service-state.js';
import { exists } from './operator.js';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { listWorktrees, pruneWorktrees } from '../harness/worktrees.js';
import { systemClock } from '../core/clock.js';
import { createLogger } from '../core/logger.js';
import { didYouMean, usageWith } from '../wording/suggest.js';
import { runTag } from '../wording/run-tag.js';
import { cancelledWhileQueuedText, queuedRunCancelledText } from '../wording/runs.js';
import type { CliCommand } from './command.js';

/** How long `baton cancel` waits for the supervising process to confirm, in ms. */
const CANCEL_WAIT_MS = 30_000;

/**
 * With embedded PGlite the running service holds the database, so the command is sent to it
 * (`POST /admin/command` on its health port, with the token from the 0600 `service.json`).
 *
 * @returns the service's replies, or undefined when the database is PostgreSQL (through
 *   `DATABASE_URL` or embedded) or no service answers (then the command opens the database itself).
 */
async function viaService(inputs: ServiceInputs, text: string): Promise<string[] | undefined> {
  if (await databaseIsShared(inputs.env.databaseUrl, inputs.batonHome, inputs.rawEnv.PATH)) return undefined;
  const state = await readServiceState(inputs.batonHome);
  if (!state) return undefined;
  try {
    const response = await fetch(`http://127.0.0.1:${state.port}/admin/command`, {
      method: 'POST',
      headers: { authorization: `Bearer ${state.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
      signal: AbortSignal.timeout(CANCEL_WAIT_MS + 10_000),
    });
    if (!response.ok) return undefined;
    return ((await response.json()) as { replies: string[] }).replies;
  } catch {
    return undefined; // a stale service.json: no service is running
  }
}

/**
 * Sends the command to the running service (viaService) and prints its replies.
 *
 * @returns the exit code, 0 when `succeeded(replies)` else 1; undefined when no service took it.
 */
export async function answeredByService(
  inputs: ServiceInputs,
  text: string,
  out: (text: string) => void,
  succeeded: (replies: readonly string[]) => boolean,
): Promise<number | undefined> {
  const replies = await viaService(inputs, text);
  if (!replies) return undefined;
  for (const reply of replies) out(reply);
  return succeeded(replies) ? 0 : 1;
}

/**
 * Opens the database for one command. With embedded PGlite and no data directory yet there are
 * no runs: `none()` answers, and nothing is created (looking must not initialize a database).
 */
export async function withStore<T>(
  inputs: ServiceInputs,
  use: (store: RunStore) => Promise<T>,
  none: () => T,
): Promise<T> {
  if (!inputs.env.databaseUrl && !(await embeddedDatabaseExists(inputs.batonHome))) return none();
  const database: Database = await openDatabase(
    inputs.env.databaseUrl
      ? { url: inputs.env.databaseUrl, maxConnections: 2 }
      : { embedded: inputs.batonHome, pathEnv: inputs.rawEnv.PATH, maxConnections: 2 },
  );
  try {
    return await use(new RunStore(database.db));
  } finally {
    await database.close();
  }
}

/** Prints recent runs, or one run in detail. @returns the exit code. */
export const runsCommand: CliCommand<ServiceInputs> = async (argv, inputs, out) => {
  const [id] = argv;
  const answered = await answeredByService(
    inputs,
    id ? `/runs ${id}` : '/runs',
    out,
    (replies) => !replies.some((r) => r.startsWith('No coding run found')),
  );
  if (answered !== undefined) return answered;
  return withStore(
    inputs,
    async (store) => {
      if (!id) {
        out(
          formatRunList(
            await store.runs.recentRuns(20),
            await store.outbox.counts(),
            await store.outbox.deadLetters(20),
          ),
        );
        return 0;
      }
      const run = isRunId(id) ? await store.runs.getRun(id) : undefined;
      if (!run) {
        out('No coding run found for that id.');
        return 1;
      }
      out(
        formatRun(
          run,
          await store.outbox.deliveriesOfRun(run.id as RunId),
          await new ApprovalStore(store.database).ofRun(run.id),
        ),
      );
      return 0;
    },
    () => {
      out(
        id
          ? 'No coding run found for that id.'
          : `No coding runs yet (the embedded database in ${inputs.batonHome} is created by the first \`baton start\` or \`baton ask\`).`,
      );
      return id ? 1 : 0;
    },
  );
};

/**
 * `baton worktrees`: lists the git worktrees baton made for runs with their branch and
 * state; `baton worktrees prune [--force] [--unlock]` removes merged ones and those past
 * `[workspace] worktree_retention_days` (see {@link pruneWorktrees}); `--unlock` also lifts git's
 * lock of a worktree whose directory is gone.
 *
 * @returns 0; 1 when a prune kept a worktree it would have removed.
 * @throws BatonError `usage` for other arguments.
 */
export const worktreesCommand: CliCommand<ServiceInputs> = async (argv, inputs, out) => {
  const [sub, ...flags] = argv;
  if (sub === 'restore') return restoreCommand(flags, inputs, out);
  const prune = sub === 'prune';
  const odd = sub !== undefined && !prune ? sub : flags.find((f) => f !== '--force' && f !== '--unlock');
  if (odd !== undefined)
    throw new BatonError(
      'usage',
      usageWith(
        didYouMean(odd, ['prune', 'restore', '--force', '--unlock']),
        'Usage: baton worktrees [prune [--force] [--unlock] | restore RUN_ID]',
      ),
    );
  // This node's runs only: another node's worktrees are on its disk (one database, several hosts).
  const thisNode = { name: inputs.config.node.name, host: hostname() };
  return withStore(
    inputs,
    async (store) => {
      if (prune) {
        const actions = await pruneWorktrees({
          store,
          clock: systemClock,
          logger: createLogger({ level: 'silent' }),
          retentionMs: inputs.config.workspace.worktreeRetentionMs,
          force: flags.includes('--force'),
          unlock: flags.includes('--unlock'),
          node: thisNode,
        });
        if (actions.length === 0) out('No worktree to prune.');
        for (const a of actions) out(`${runTag(a.runId)} ${a.action}: ${a.detail}`);
        return actions.some((a) => a.action === 'kept') ? 1 : 0;
      }
      const states = await listWorktrees(store, thisNode);
      if (states.length === 0) out('No run worktrees.');
      for (const s of states) {
        const state =
          s.removed && s.gitLock !== undefined
            ? `REMOVED, but git keeps it locked ("${s.gitLock}"): \`baton worktrees prune --unlock\` unlocks and clears it`
            : s.removed
              ? 'REMOVED: the directory is gone (`baton worktrees prune` clears this entry)'
              : [
                  s.runStatus,
                  s.dirty ? 'uncommitted changes' : 'clean',
                  s.branchExists
                    ? `${s.unmergedCommits} unmerged commit${s.unmergedCommits === 1 ? '' : 's'}`
                    : 'branch gone',
                ].join(', ');
        out(`${s.runId} · ${s.branch} · ${s.path} · from ${s.sourceRoot} · ${state}`);
      }
      return 0;
    },
    () => {
      out('No run worktrees.');
      return 0;
    },
  );
};

/** `baton worktrees restore RUN_ID`: the Restore worktree button, from the terminal. @returns 0 when the worktree is there now. */
const restoreCommand: CliCommand<ServiceInputs> = async (argv, inputs, out) => {
  const [id, ...extra] = argv;
  if (!id || extra.length > 0) throw new BatonError('usage', 'Usage: baton worktrees restore RUN_ID');
  const unknown = (): number => {
    out('No coding run found for that id.');
    return 1;
  };
  return withStore(
    inputs,
    async (store) => {
      const run = isRunId(id) ? await store.runs.getRun(id) : undefined;
      if (!run) return unknown();
      if (run.node && run.node !== inputs.config.node.name) {
        out(`${runTag(run.id)} ran on node ${run.node}; its worktree is on that machine's disk. Run this there.`);
        return 1;
      }
      const result = await pressRestoreWorktree(run);
      out(result.text);
      return result.ok ? 0 : 1;
    },
    unknown,
  );
};

/**
 * Asks the supervising process to cancel a run and waits (up to 30 s) until it has ended.
 *
 * @returns 0 once cancelled; 1 when unknown or already finished; 3 when no process confirmed.
 */
export const cancelCommand: CliCommand<ServiceInputs> = async (argv, inputs, out) => {
  const [id] = argv;
  if (!id) throw new BatonError('usage', 'Usage: baton cancel RUN_ID');
  const answered = await answeredByService(inputs, `/cancel ${id}`, out, (replies) =>
    replies.some((r) => / cancelled\.$| cancelled \(it was queued| cancel requested/.test(r)),
  );
  if (answered !== undefined) return answered;
  return withStore(
    inputs,
    async (store) => {
      const run = isRunId(id) ? await store.runs.getRun(id) : undefined;
      if (!run) {
        out('No coding run found for that id.');
        return 1;
      }
      if (run.status === 'queued') {
        if (await cancelQueuedRun(store, run, 'owner_cancel')) {
          out(queuedRunCancelledText(run.id));
          return 0;
        }
        out('That coding run has already started or finished; cancel it again if it is active.');
        return 1;
      }
      if (!(await store.runs.requestCancel(run.id, 'owner_cancel'))) {
        out('That coding run has already finished.');
        return 1;
      }
      return waitForEnd(store, [run.id], out);
    },
    () => {
      out('No coding run found for that id.');
      return 1;
    },
  );
};

/** Cancels every active run. @returns 0, or 3 when a run was not confirmed in time. */
export async function stopCommand(inputs: ServiceInputs, out: (text: string) => void): Promise<number> {
  const answered = await answeredByService(inputs, '/stop', out, () => true);
  if (answered !== undefined) return answered;
  return withStore(
    inputs,
    async (store) => {
      let dropped = 0;
      for (const run of await store.queue.queuedRuns()) if (await cancelQueuedRun(store, run, 'stop')) dropped += 1;
      if (dropped > 0) out(`Cancelled ${dropped} queued run${dropped === 1 ? '' : 's'}.`);
      const active = await store.runs.activeRuns();
      const requested: string[] = [];
      for (const run of active) if (await store.runs.requestCancel(run.id, 'stop')) requested.push(run.id);
      out(`Stopping ${requested.length} active run${requested.length === 1 ? '' : 's'}.`);
      // A run that finished on its own meanwhile is reported as such; only an unconfirmed stop fails.
      return requested.length === 0 || (await waitForEnd(store, requested, out)) !== 3 ? 0 : 3;
    },
    () => {
      out('Stopping 0 active runs.');
      return 0;
    },
  );
}

/**
 * Cancels a queued run with its outcome message, which the service delivers.
 *
 * @returns false when it was no longer queued.
 */
async function cancelQueuedRun(store: RunStore, run: RunRow, reason: 'owner_cancel' | 'stop'): Promise<boolean> {
  const { origin } = run;
  const body = cancelledWhileQueuedText(run, reason === 'stop' ? 'baton stop' : undefined);
  const target = {
    platform: origin.platform,
    chatId: origin.chatId,
    ...(origin.threadId ? { threadId: origin.threadId } : {}),
    replyToMessageId: origin.messageId,
  };
  return (
    (await store.queue.cancelQueued(
      run.id,
      reason,
      { runId: run.id as RunId, kind: 'outcome', target, body },
      new Date(),
    )) !== null
  );
}

/**
 * Waits until the runs asked to cancel have ended. A run that ended otherwise than cancelled
 * finished on its own meanwhile (its outcome stands) and is reported as already finished.
 *
 * @returns 0 when every run ended cancelled; 1 when one had already finished; 3 when one was
 *   not confirmed in time.
 */
async function waitForEnd(store: RunStore, ids: readonly string[], out: (text: string) => void): Promise<number> {
  const deadline = performance.now() + CANCEL_WAIT_MS;
  let pending = [...ids];
  let finishedOnItsOwn = false;
  while (pending.length > 0 && performance.now() < deadline) {
    const still: string[] = [];
    for (const id of pending) {
      const run = await store.runs.getRun(id);
      if (run && (run.status === 'starting' || run.status === 'running')) still.push(id);
      else if (run?.status === 'cancelled') out(`${runTag(id)} cancelled${run.reason ? ` · ${run.reason}` : ''}`);
      else {
        finishedOnItsOwn = true;
        out(`${runTag(id)} had already finished: ${run?.status ?? 'gone'}${run?.reason ? ` · ${run.reason}` : ''}.`);
      }
    }
    pending = still;
    if (pending.length > 0) await sleep(250);
  }
  for (const id of pending)
    out(
      `${runTag(id)} cancel requested, but no baton process confirmed it within ${CANCEL_WAIT_MS / 1000}s (is the service that started it running?).`,
    );
  if (pending.length > 0) return 3;
  return finishedOnItsOwn ? 1 : 0;
}
