import { beforeAll, describe, expect, it } from 'vitest';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { ApprovalStore } from '../../src/store/approvals-repo.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { createRunRow } from '../support/rows.js';

const now = new Date('2026-12-01T08:00:00.000Z');

describe(`ApprovalStore on ${testEngine}`, () => {
  const database = useTestDatabase();
  let runs: RunStore;
  let approvals: ApprovalStore;

  beforeAll(async () => {
    runs = new RunStore(database.db);
    approvals = new ApprovalStore(database.db);
  });

  async function newRun(): Promise<RunId> {
    const id = newRunId();
    await createRunRow(
      runs,
      {
        id,
        vendor: 'claude',
        task: 't',
        cwd: `/repo/${id}`,
        options: { timeoutMinutes: 30, progress: false, approve: true },
      },
      { maxActive: 100, now, started: { body: 'started' } },
    );
    return id;
  }

  it('a request sent again finds its row; a decision is written once', async () => {
    const runId = await newRun();
    const request = { runId, requestId: 'toolu_1', tool: 'Bash', input: { command: 'npm test' }, kind: 'Bash:npm' };
    const first = await approvals.open(request, now);
    const again = await approvals.open(request, new Date(now.getTime() + 5_000));
    expect(first.created).toBe(true);
    expect(again).toMatchObject({ created: false, row: { id: first.row.id, requestedAt: now } });
    expect(await approvals.decide(first.row.id, 'allow_run', 'telegram:1', now)).toMatchObject({
      decision: 'allow_run',
      decidedBy: 'telegram:1',
    });
    expect(await approvals.decide(first.row.id, 'deny', 'telegram:1', now)).toBeUndefined();
    expect(await approvals.ruleFor(runId, 'Bash:npm')).toMatchObject({ id: first.row.id });
    expect(await approvals.ruleFor(runId, 'Bash:rm')).toBeUndefined();
  });

  it('stores an input holding U+0000 (jsonb refuses it) with U+FFFD in its place', async () => {
    const runId = await newRun();
    const { row } = await approvals.open(
      { runId, requestId: 'toolu_nul', tool: 'Write', input: { file_path: 'a\u0000b', content: 'x' }, kind: 'Write' },
      now,
    );
    expect(row.input).toEqual({ file_path: 'a\ufffdb', content: 'x' });
  });

  it('closes the open approvals of runs that are no longer active as run_gone', async () => {
    const active = await newRun();
    const ended = await newRun();
    const open = await approvals.open({ runId: active, requestId: 'a', tool: 'Bash', input: {}, kind: 'Bash=' }, now);
    const gone = await approvals.open({ runId: ended, requestId: 'b', tool: 'Bash', input: {}, kind: 'Bash=' }, now);
    await runs.runs.finishRun(
      ended,
      { status: 'interrupted', reason: 'restart', endedAt: now },
      { runId: ended, kind: 'outcome', target: { platform: 'telegram', chatId: '1' }, body: 'x' },
      now,
    );
    expect(await approvals.closeGone(now)).toBeGreaterThanOrEqual(1);
    expect((await approvals.get(gone.row.id))?.decision).toBe('run_gone');
    expect((await approvals.get(open.row.id))?.decision).toBeNull();
  });
});
