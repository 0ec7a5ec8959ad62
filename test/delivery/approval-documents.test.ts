/**
 * A tool input longer than the platform's message limit (issue #14): the approval message is cut
 * to fit one message of the platform, with its buttons, and the whole input follows as a file.
 * Real database, the real outbox, a recording channel with Discord's 2,000-character limit.
 */
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { newRunId, type RunId } from '../../src/core/ids.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { ApprovalBroker } from '../../src/harness/approvals.js';
import { ApprovalStore } from '../../src/store/approvals-repo.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { NewRunRow, RunRow } from '../../src/store/schema.js';
import { approvalWords } from '../../src/wording/approvals.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const DISCORD_MAX = 2000;

const database = useTestDatabase();
let store: RunStore;
let approvals: ApprovalStore;
let runsDir: string;

beforeAll(async () => {
  store = new RunStore(database.db);
  approvals = new ApprovalStore(database.db);
  runsDir = await mkdtemp(join(tmpdir(), 'baton-approval-docs-'));
});
afterAll(async () => {
  if (runsDir) await rm(runsDir, { recursive: true, force: true });
});

/** A running claude run of a Discord conversation whose `started` message went out. */
async function newRun(outbox: Outbox, channel: RecordingChannel): Promise<RunRow> {
  const id = newRunId();
  const now = new Date();
  const run = {
    id,
    vendor: 'claude',
    status: 'starting',
    task: 't',
    cwd: `/repo/${id}`,
    worktreeRoot: `/repo/${id}`,
    options: { timeoutMinutes: 30, progress: false, approve: true },
    origin: { platform: 'discord', chatId: '5', senderId: '1', messageId: '10' },
    supervisor: 'testhost:1',
    createdAt: now,
  } as NewRunRow;
  await store.launches.createRun(
    run,
    { runId: id as RunId, kind: 'started', target: { platform: 'discord', chatId: '5' }, body: 'started' },
    100,
    now,
  );
  await mkdir(join(runsDir, id), { recursive: true, mode: 0o700 });
  for (const row of await store.outbox.deliveriesOfRun(id)) await outbox.attempt(row);
  channel.sent.length = 0;
  channel.order.length = 0;
  return (await store.runs.getRun(id))!;
}

function setup() {
  const channel = new RecordingChannel('discord', DISCORD_MAX);
  const adapters = new Map([['discord' as const, channel]]);
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
    runsDir,
    maxMessageLength: (platform) => adapters.get(platform as 'discord')?.maxMessageLength,
    homeDir: tmpdir(),
    protectedDirs: [],
    words: approvalWords,
  });
  return { channel, broker, outbox };
}

describe(`approval messages of long tool inputs (${testEngine})`, () => {
  it('cuts the message to one message of the platform, buttons under it, and sends the whole input as a file', async () => {
    const { channel, broker, outbox } = setup();
    const run = await newRun(outbox, channel);
    const command = `printf '%s' ${'a'.repeat(5_000)} > long.txt`;
    expect(
      await broker.request(run, { runId: run.id, requestId: 'toolu_long', tool: 'Bash', input: { command } }),
    ).toEqual({ state: 'pending' });
    expect(channel.sent).toHaveLength(1);
    const message = channel.sent[0]!;
    expect(message.text.length).toBeLessThanOrEqual(DISCORD_MAX);
    expect(message.text).toMatch(
      new RegExp(
        `^\\[run ${run.id}\\] claude asks to use Bash:\\n\\$ printf '%s' a+\\n… \\(\\d+ more characters; the whole input follows as approval-\\d+\\.txt\\)`,
      ),
    );
    expect(message.buttons?.map((b) => b.label)).toEqual(['Allow', 'Allow for this run', 'Deny']);
    expect(channel.documents).toHaveLength(1);
    const document = channel.documents[0]!;
    expect(document.filename).toMatch(/^approval-\d+\.txt$/);
    expect(document.content.toString('utf8')).toBe(`$ ${command}`);
    expect(document.caption).toBe(`[run ${run.id}] The whole input of this tool call: ${document.filename}`);
    expect(channel.order).toEqual([`text:[run ${run.id}] claude asks to use Bash:`, `file:${document.filename}`]);
    expect((await stat(join(runsDir, run.id, document.filename))).mode & 0o777).toBe(0o600);
  });

  it('a short input goes as one message without a file', async () => {
    const { channel, broker, outbox } = setup();
    const run = await newRun(outbox, channel);
    await broker.request(run, { runId: run.id, requestId: 'toolu_short', tool: 'Bash', input: { command: 'ls' } });
    expect(channel.sent).toHaveLength(1);
    expect(channel.sent[0]!.text.split('\n')[1]).toBe('$ ls');
    expect(channel.documents).toHaveLength(0);
  });
});
