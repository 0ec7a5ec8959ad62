/**
 * The finish step: the run's end stored and reported. Its diff and worktree changes measured,
 * the outcome worded and written as `result.md`, the end put in `terminal.json` and then in the
 * database (retried through an outage), and the outcome sent, the live status edited last.
 */
import { join } from 'node:path';
import type { RunId } from '../../core/ids.js';
import type { DeliveryRow, DocumentJson, RunRow } from '../../store/schema.js';
import { diffSinceSnapshot, removeSnapshotIndexes, type TreeSnapshot } from '../diff.js';
import { SNAPSHOT_FILES } from '../diff.js';
import type { Classified, ExitFacts, OutcomeDiff } from '../outcome.js';
import { persistTerminal, writeTerminalRecord, type TerminalRecord } from '../terminal-write.js';
import type { StreamFacts } from '../vendors/types.js';
import { worktreeChanges } from '../worktrees.js';
import type { RunServices } from './context.js';
import { diagnosticsTail, judgeRun, terminalRecordOf } from './judge.js';
import { notePlanWindows } from './plan-windows.js';
import { writePrivate } from './private-file.js';
import type { ActiveRun, InstalledVendor } from './types.js';
import { verifyRun } from './verify-step.js';
import type { VerificationJson } from '../../types/run-facts.js';

/** What a run ended with, as the finish step takes it. */
export interface RunEnd {
  run: RunRow;
  installed: InstalledVendor | undefined;
  facts: StreamFacts;
  exit: ExitFacts;
  stderr: string;
  runDir: string;
  /** The supervisor's entry; told how the end was recorded. */
  entry?: ActiveRun;
  /** The launch snapshot the diff is taken against; none: no diff. */
  snapshot?: TreeSnapshot;
}

/** Stores and reports the end of a run. @throws Error when the database write fails other than at shutdown. */
export async function finishRun(services: RunServices, end: RunEnd): Promise<void> {
  const { deps } = services;
  const { run, entry, facts, exit } = end;
  // The CLI has exited: a cancel that arrives while the end is written (which can take as long
  // as a database outage) must not signal a process group whose id may have been reused.
  if (entry) entry.stop = async () => {};
  const classified = judgeRun(facts, exit);
  const endedAt = deps.clock.now();
  const body = await describeEnd(services, end, classified, endedAt);
  const { verification } = body;
  const record = terminalRecordOf({
    run,
    facts,
    exit,
    classified,
    endedAt,
    body: body.text,
    documents: await outcomeDocuments(services, end, body),
    labels: deps.words.buttons,
    otherVendors: [...deps.vendors.keys()].filter((vendor) => vendor !== run.vendor),
    verification,
  });
  await writePrivate(
    join(end.runDir, 'result.txt'),
    classified.status === 'completed' ? (facts.finalMessage ?? '') : (classified.errorMessage ?? ''),
  ).catch((err: unknown) => deps.logger.warn({ err, runId: run.id }, 'could not write result.txt'));
  const outcome = await recordEnd(services, end.runDir, record, classified);
  if (outcome === 'stopping') return;
  if (entry) entry.ended = outcome ? classified.status : 'already_ended';
  await reportEnd(services, end, classified, endedAt, outcome);
  await notePlanWindows(services, run, facts);
}

/**
 * The outcome message's text, the run's patch file when it has one, and its verification. The
 * change is measured before the verification runs: the patch is the agent's change, not what
 * the owner's commands wrote (build output, caches).
 */
async function describeEnd(
  services: RunServices,
  end: RunEnd,
  classified: Classified,
  endedAt: Date,
): Promise<{ text: string; patchPath?: string; verification: VerificationJson | undefined }> {
  const { deps } = services;
  const { run, facts, exit, installed } = end;
  const runId = run.id as RunId;
  const sessionId = facts.sessionId;
  const diff = end.snapshot ? await runDiff(services, run, end.runDir, end.snapshot) : undefined;
  const worktree = run.branch
    ? {
        branch: run.branch,
        changes: await worktreeChanges(run.worktreeRoot).catch((err: unknown) => {
          deps.logger.warn({ err, runId }, 'could not measure the changes in the run worktree');
          return undefined;
        }),
      }
    : undefined;
  const verification = await verifyRun(services, { ...end, live: facts.live }, classified);
  const text = deps.describeOutcome({
    worktree,
    run,
    status: classified.status,
    reason: classified.reason,
    endedAt,
    quotaResetsAt: classified.quotaResetsAt,
    finalMessage: facts.finalMessage ?? null,
    errorMessage: classified.errorMessage,
    usage: facts.usage ?? null,
    denials: facts.denials ?? [],
    note: classified.note,
    diagnostics: diagnosticsTail(facts.notices, end.stderr, classified.errorMessage),
    resumeCommand: sessionId && installed ? installed.vendor.resumeCommand(run.cwd, sessionId) : undefined,
    processNote: exit.processNote,
    stopAsked: exit.stopAsked,
    instructionsNote: exit.instructionsNote,
    streamNote: exit.streamNote,
    diff: diff?.facts,
    verification,
  });
  return { text, verification, ...(diff?.patchPath ? { patchPath: diff.patchPath } : {}) };
}

/**
 * The files sent with the outcome: the whole outcome as result.md (the outbox sends it instead of
 * the later parts when the outcome would take more than LONG_BODY_PARTS messages on the
 * platform), and the run's patch.
 */
async function outcomeDocuments(
  services: RunServices,
  end: RunEnd,
  body: { text: string; patchPath?: string },
): Promise<DocumentJson[]> {
  const { deps } = services;
  const runId = end.run.id;
  const documents: DocumentJson[] = [];
  const resultPath = join(end.runDir, 'result.md');
  await writePrivate(resultPath, body.text).then(
    () =>
      documents.push({
        path: resultPath,
        filename: 'result.md',
        use: 'long_body',
        caption: deps.words.resultCaption(runId),
      }),
    (err: unknown) => deps.logger.warn({ err, runId }, 'could not write result.md; a long outcome goes as text parts'),
  );
  if (body.patchPath) {
    documents.push({
      path: body.patchPath,
      filename: `${runId}.patch`,
      use: 'always',
      caption: deps.words.patchCaption(runId),
    });
  }
  return documents;
}

/**
 * Writes the run's end: to the run directory first (the database may be away right now), then to
 * the database, retried until it lands or the service stops.
 *
 * @returns the outcome delivery to send; null when the run was no longer active; `stopping` when
 *   the service stopped first (the next start records the end from terminal.json).
 */
async function recordEnd(
  services: RunServices,
  runDir: string,
  record: TerminalRecord,
  classified: Classified,
): Promise<DeliveryRow | null | 'stopping'> {
  const { deps, stopping } = services;
  const { runId } = record;
  await writeTerminalRecord(runDir, record).catch((err: unknown) =>
    deps.logger.warn({ err, runId }, 'could not write terminal.json'),
  );
  try {
    return await persistTerminal(
      {
        store: deps.store,
        logger: deps.logger,
        now: () => deps.clock.now(),
        ...(deps.terminalWrite ? { policy: deps.terminalWrite } : {}),
      },
      record,
      stopping,
    );
  } catch (err) {
    if (!stopping.aborted) throw err;
    deps.logger.warn(
      { runId, status: classified.status },
      'service stopping before the run end reached the database; the next start records it from terminal.json',
    );
    return 'stopping';
  }
}

/** Closes the run's approvals, traces its end, sends its outcome, then edits its live status. */
async function reportEnd(
  services: RunServices,
  end: RunEnd,
  classified: Classified,
  endedAt: Date,
  outcome: DeliveryRow | null,
): Promise<void> {
  const { deps, tracer } = services;
  const { run, facts, exit } = end;
  const runId = run.id as RunId;
  await deps
    .onRunEnded?.(runId)
    .catch((err: unknown) => deps.logger.warn({ err, runId }, 'could not close the tool approvals of an ended run'));
  deps.logger.info({ runId, status: classified.status, reason: classified.reason }, 'run finished');
  tracer.trace(classified.status === 'completed' ? 'run_complete' : 'run_error', {
    runId,
    status: classified.status,
    reason: classified.reason,
    durationMs: endedAt.getTime() - run.createdAt.getTime(),
    exitCode: exit.exitCode,
    signal: exit.signal,
    inputTokens: facts.usage?.inputTokens ?? null,
    outputTokens: facts.usage?.outputTokens ?? null,
  });
  if (!outcome) {
    deps.status?.editor.forget(runId);
    return;
  }
  await deps.outbox.attempt(outcome);
  // After the outcome, never before it: the last edit of the live status says how it ended.
  const status = deps.status;
  status?.editor.finish(run, () =>
    status.describe({
      status: classified.status,
      reason: classified.reason,
      elapsedMs: endedAt.getTime() - run.createdAt.getTime(),
      live: facts.live,
      usage: facts.usage ?? null,
      detail: run.options.progress,
    }),
  );
}

/** The run's change since `snapshot`, with its patch written to `<run id>.patch`; undefined when none. */
async function runDiff(
  services: RunServices,
  run: RunRow,
  runDir: string,
  snapshot: TreeSnapshot,
): Promise<{ facts: OutcomeDiff; patchPath?: string } | undefined> {
  const { deps } = services;
  try {
    const filename = `${run.id}.patch`;
    const diff = await diffSinceSnapshot(
      snapshot,
      join(runDir, SNAPSHOT_FILES.end),
      join(runDir, filename),
      deps.limits.maxPatchBytes,
      deps.logger,
    );
    if (!diff) return undefined;
    return {
      facts: {
        stat: diff.stat,
        ...(diff.patchPath ? { patchFilename: filename } : { patchMissing: diff.patchMissing }),
        ...(diff.leftOut ? { leftOut: diff.leftOut, includeCommand: `baton patch ${run.id} --include-ignored` } : {}),
      },
      ...(diff.patchPath ? { patchPath: diff.patchPath } : {}),
    };
  } catch (err) {
    deps.logger.warn({ err, runId: run.id }, 'could not diff the working tree; the outcome carries no diff');
    return undefined;
  } finally {
    await removeSnapshotIndexes(runDir).catch((err: unknown) =>
      deps.logger.warn({ err, runId: run.id }, 'could not remove the snapshot indexes'),
    );
  }
}
