/**
 * What "Allow for this run" covers, through the real approval path: the broker, the real
 * database and outbox, a recording channel. A rule the owner gave for one call must not let a
 * later call that runs other code, or writes outside the run's directory, through unasked.
 */
import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { ApprovalBroker, type ApprovalRequest } from '../../src/harness/approvals.js';
import { ApprovalStore } from '../../src/store/approvals-repo.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { NewRunRow, RunRow } from '../../src/store/schema.js';
import { approvalWords } from '../../src/wording/approvals.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const database = useTestDatabase();
let store: RunStore;
let approvals: ApprovalStore;
let base: string;
let home: string;
let batonHome: string;
let outside: string;

beforeAll(async () => {
  store = new RunStore(database.db);
  approvals = new ApprovalStore(database.db);
  base = await realpath(await mkdtemp(join(tmpdir(), 'baton-approval-scope-')));
  home = join(base, 'home');
  batonHome = join(home, '.baton');
  outside = join(base, 'elsewhere');
  await mkdir(batonHome, { recursive: true });
  await mkdir(outside, { recursive: true });
});
afterAll(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

/** A running claude run in a fresh project directory under the home, its `started` message sent. */
async function newRun(outbox: Outbox, channel: RecordingChannel): Promise<RunRow> {
  const id = newRunId();
  const cwd = join(home, 'code', id);
  await mkdir(join(cwd, '.git', 'hooks'), { recursive: true });
  const now = new Date();
  const run = {
    id,
    vendor: 'claude',
    status: 'running',
    task: 't',
    cwd,
    worktreeRoot: cwd,
    options: { timeoutMinutes: 30, progress: false, approve: true },
    origin: { platform: 'telegram', chatId: '5', senderId: '1', messageId: '10' },
    supervisor: 'testhost:1',
    createdAt: now,
  } as NewRunRow;
  await store.launches.createRun(
    run,
    { runId: id as RunId, kind: 'started', target: { platform: 'telegram', chatId: '5' }, body: 'started' },
    100,
    now,
  );
  for (const row of await store.outbox.deliveriesOfRun(id)) await outbox.attempt(row);
  channel.sent.length = 0;
  return (await store.runs.getRun(id))!;
}

function setup() {
  const channel = new RecordingChannel('telegram', 4096);
  const adapters = new Map([['telegram' as const, channel]]);
  const outbox = new Outbox({
    store,
    clock: systemClock,
    logger: silentLogger(),
    adapters,
    policy: { backoffBaseMs: 30_000, backoffCapMs: 60_000, maxAttempts: 5, maxAgeMs: 3_600_000 },
  });
  const broker = new ApprovalBroker({
    approvals,
    store,
    outbox,
    clock: systemClock,
    logger: silentLogger(),
    timeoutMs: 600_000,
    longPollMs: 0,
    homeDir: home,
    protectedDirs: [batonHome, join(home, '.codex'), join(home, '.claude')],
    words: approvalWords,
  });
  return { channel, broker, outbox };
}

let nextRequest = 0;
function call(run: RunRow, tool: string, input: Record<string, unknown>): ApprovalRequest {
  nextRequest += 1;
  return { runId: run.id, requestId: `toolu_${nextRequest}`, tool, input };
}

/** Asks for `first`, presses Allow for this run on it, and returns what each of `later` gets. */
async function afterAllowForRun(first: [string, Record<string, unknown>], later: [string, Record<string, unknown>][]) {
  const { channel, broker, outbox } = setup();
  const run = await newRun(outbox, channel);
  const asked = call(run, ...first);
  expect(await broker.request(run, asked)).toEqual({ state: 'pending' });
  const row = (await approvals.ofRun(run.id)).at(-1)!;
  expect(await broker.press(row.id, 'allow_run', 'telegram:1')).toMatch(/^Allowed, and /);
  expect((await broker.request(run, asked)).state).toBe('decided');
  const answers: string[] = [];
  for (const [tool, input] of later) {
    const answer = await broker.request(run, call(run, tool, input));
    answers.push(answer.state === 'decided' ? answer.behavior : answer.state);
  }
  return { answers, channel };
}

describe(`Allow for this run, through the broker (${testEngine})`, () => {
  it('an allowed `git tag` does not cover git options or aliases that run other code', async () => {
    const { answers } = await afterAllowForRun(
      ['Bash', { command: 'git tag v1' }],
      [
        ['Bash', { command: "git -c 'alias.x=!touch pwned' x" }],
        ['Bash', { command: 'git -c core.fsmonitor="touch pwned" status' }],
        ['Bash', { command: 'git tag v2' }],
      ],
    );
    expect(answers).toEqual(['pending', 'pending', 'allow']);
  });

  it('an allowed in-project Write covers Writes in the run directory only', async () => {
    const { channel, broker, outbox } = setup();
    const run = await newRun(outbox, channel);
    await symlink(outside, join(run.cwd, 'escape'));
    const first = call(run, 'Write', { file_path: join(run.cwd, 'a.txt'), content: 'a' });
    await broker.request(run, first);
    const row = (await approvals.ofRun(run.id)).at(-1)!;
    await broker.press(row.id, 'allow_run', 'telegram:1');
    const answerOf = async (file_path: string): Promise<string> => {
      const answer = await broker.request(run, call(run, 'Write', { file_path, content: 'x' }));
      return answer.state === 'decided' ? answer.behavior : answer.state;
    };
    expect(await answerOf(join(run.cwd, 'src', 'b.txt'))).toBe('allow');
    channel.sent.length = 0;
    expect(await answerOf(join(batonHome, '.env'))).toBe('pending');
    expect(channel.sent.at(-1)?.text).toContain("baton's own files");
    expect(channel.sent.at(-1)?.buttons?.map((b) => b.label)).toEqual(['Allow', 'Deny']);
    expect(await answerOf(join(outside, 'x.txt'))).toBe('pending');
    expect(channel.sent.at(-1)?.text).toContain('outside the project');
    expect(await answerOf(join(run.cwd, '..', 'sibling.txt'))).toBe('pending');
    expect(await answerOf(join(run.cwd, 'escape', 'y.txt'))).toBe('pending');
    expect(channel.sent.at(-1)?.text).toContain('outside the project');
    expect(await answerOf(join(run.cwd, '.git', 'hooks', 'pre-commit'))).toBe('pending');
    expect(await answerOf(join(run.cwd, '.git', 'config'))).toBe('pending');
    expect(await answerOf(join(home, '.bashrc'))).toBe('pending');
    expect(await answerOf(join(home, '.ssh', 'authorized_keys'))).toBe('pending');
    expect(await answerOf(join(home, '.claude', 'settings.json'))).toBe('pending');
    expect(await answerOf('relative/inside.txt')).toBe('allow');
  });

  it('the card shows hidden and look-alike characters escaped, with a warning line', async () => {
    const { channel, broker, outbox } = setup();
    const run = await newRun(outbox, channel);
    await broker.request(run, call(run, 'Bash', { command: 'echo ok\u202e\u200b # \u0441url x' }));
    const text = channel.sent.at(-1)!.text;
    expect(text).toContain('$ echo ok\\u{202E}\\u{200B} # \\u{441}url x');
    expect(text).not.toMatch(/[\u202e\u200b\u0441]/);
    expect(text).toMatch(/^⚠ .*(hidden|look-alike)/m);
  });
});
