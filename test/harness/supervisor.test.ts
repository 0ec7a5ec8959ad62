/**
 * The run supervisor with real processes (a fake codex script that succeeds, fails, hangs,
 * floods or prints garbage) on a real database.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { harnessWords, howToStop } from '../../src/wording/harness.js';
import { outcomeText } from '../../src/wording/runs.js';
import type { RunId } from '../../src/core/ids.js';
import { RunStore } from '../../src/store/runs-repo.js';
import { reconcileOrphanedRuns } from '../../src/harness/reconcile.js';
import { detectCgroupSupport } from '../../src/harness/run-cgroup.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { createHarness, inbound, insertRun, type TestHarness } from '../support/harness.js';
import { testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

let h: TestHarness;
let repoCounter = 0;

/** Launches `/codex in:<fresh dir> <prompt>` as the owner and returns the run id. */
async function launch(prompt: string, options = '', harness = h): Promise<RunId> {
  const cwd = join(harness.root, `repo${++repoCounter}`);
  await mkdir(cwd, { recursive: true });
  const result = await harness.dispatcher.handle(
    inbound('1', `/codex in:${cwd} ${options} ${prompt}`.replace(/\s+/g, ' ')),
  );
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return result.runId;
}

async function finished(runId: RunId, harness = h) {
  await harness.supervisor.idle();
  const run = await harness.store.runs.getRun(runId);
  return run!;
}

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.dispose();
});

describe(`run supervisor with real processes (${testEngine})`, () => {
  it('completes a run, stores usage and session, keeps private artifacts, posts the outcome', async () => {
    const runId = await launch('success');
    const run = await finished(runId);
    expect(run).toMatchObject({
      status: 'completed',
      reason: null,
      finalMessage: 'fake done',
      vendorSessionId: 'fake-thread-1',
      exitCode: 0,
    });
    expect(run.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    expect(run.startedAt).toBeInstanceOf(Date);
    const dir = join(h.runsDir, runId);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    for (const file of ['prompt.md', 'events.jsonl', 'result.txt'])
      expect((await stat(join(dir, file))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'result.txt'), 'utf8')).toBe('fake done');
    expect((await readFile(join(dir, 'events.jsonl'), 'utf8')).trim().split('\n')).toHaveLength(3);
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    expect(outcome.text).toContain('fake done');
    const deliveries = await h.store.outbox.deliveriesOfRun(runId);
    expect(deliveries.map((d) => [d.kind, d.status])).toEqual([
      ['started', 'delivered'],
      ['outcome', 'delivered'],
    ]);
  });

  it('fails with the vendor words on turn.failed, with a resume command', async () => {
    const runId = await launch('fail');
    const run = await finished(runId);
    expect(run).toMatchObject({
      status: 'failed',
      reason: 'vendor_error',
      errorMessage: 'fake failure words',
      exitCode: 1,
    });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed`));
    expect(outcome.text.split('\n')[1]).toBe('fake failure words');
    expect(outcome.text).toContain('codex exec resume fake-thread-1 --json');
  });

  it('fails a run that exits 0 without a terminal event', async () => {
    const run = await finished(await launch('no-terminal'));
    expect(run).toMatchObject({ status: 'failed', reason: 'no_terminal_event', exitCode: 0 });
  });

  it('kills a run past max_framing_errors as failed/protocol', async () => {
    const run = await finished(await launch('garbage 50'));
    expect(run).toMatchObject({ status: 'failed', reason: 'protocol' });
  });

  it('tolerates framing errors up to the limit', async () => {
    const run = await finished(await launch('garbage 5'));
    expect(run).toMatchObject({ status: 'completed', reason: null, errorMessage: null, finalMessage: 'after garbage' });
  });

  it('gives the child only HOME, PATH, TERM, USER, BATON_RUN_ID and CODEX_HOME', async () => {
    process.env.BATON_TEST_CANARY = 'canary-in-the-service-env';
    try {
      const runId = await launch('env');
      const run = await finished(runId);
      const env = JSON.parse(run.finalMessage!) as Record<string, string>;
      expect(Object.keys(env).sort()).toEqual(['BATON_RUN_ID', 'CODEX_HOME', 'HOME', 'PATH', 'TERM', 'USER']);
      expect(env.BATON_RUN_ID).toBe(runId);
      expect(JSON.stringify(env)).not.toContain('canary-in-the-service-env');
    } finally {
      delete process.env.BATON_TEST_CANARY;
    }
  });

  it('sends a 300 KB prompt on stdin, whole, and keeps it out of argv', async () => {
    const big = `prompt-length ${'x'.repeat(300 * 1024)}`;
    const run = await finished(await launch(big));
    expect(run).toMatchObject({ status: 'completed', finalMessage: String(big.length) });
    const argvRun = await finished(await launch(`argv ${'y'.repeat(300 * 1024)}`));
    const argv = JSON.parse(argvRun.finalMessage!) as string[];
    expect(argv.at(-1)).toBe('-');
    expect(argv.every((arg) => Buffer.byteLength(arg) < 4096)).toBe(true);
  });

  it('gives a short task on stdin too, never on argv (where `ps` would show it)', async () => {
    const run = await finished(await launch('argv a short secret-ish task'));
    expect(run).toMatchObject({ status: 'completed' });
    const argv = JSON.parse(run.finalMessage!) as string[];
    expect(argv.slice(-2)).toEqual(['--', '-']);
    expect(argv.join(' ')).not.toContain('secret-ish');
  });

  it('takes the working-tree snapshot before the CLI has its task: what the CLI writes at once is in the diff', async () => {
    const cwd = join(h.root, `repo${++repoCounter}`);
    await mkdir(cwd, { recursive: true });
    await execa('git', ['init', '-q', cwd]);
    const result = await h.dispatcher.handle(inbound('1', `/codex in:${cwd} write-file made-by-run.txt`));
    if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
    const run = await finished(result.runId);
    expect(run).toMatchObject({ status: 'completed', finalMessage: 'wrote a file' });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${result.runId}\\] completed`));
    expect(outcome.text).toMatch(/made-by-run\.txt/);
  });

  it("ends a run whose CLI exits before reading its task with the CLI's own exit, without an unhandled error", async () => {
    const script = join(h.dir, 'exits-at-once.sh');
    await writeFile(script, '#!/bin/sh\necho "no stdin for me" >&2\nexit 3\n', { mode: 0o755 });
    const quick = await createHarness({ codexBinary: script });
    try {
      const cwd = join(quick.root, 'r');
      await mkdir(cwd);
      // Larger than a pipe's buffer, so the write cannot complete before the CLI is gone (EPIPE).
      const result = await quick.dispatcher.handle(inbound('1', `/codex in:${cwd} success ${'p'.repeat(256 * 1024)}`));
      if (result.kind !== 'launched') throw new Error('not launched');
      await quick.supervisor.idle();
      expect(await quick.store.runs.getRun(result.runId)).toMatchObject({ status: 'failed', exitCode: 3 });
      const outcome = await quick.channel.waitForText(/failed/);
      expect(outcome.text).toContain('no stdin for me');
    } finally {
      await quick.dispose();
    }
  });

  it('refuses a task longer than the vendor reads on stdin, before spawning', async () => {
    const run = await finished(await launch(`success ${'z'.repeat(1_048_576)}`));
    expect(run).toMatchObject({ status: 'failed', reason: 'task_too_long', exitCode: null });
    expect(run.errorMessage).toMatch(/^The task is 1,048,584 characters; codex accepts at most 1,048,576\./);
  });

  it('counts a task in characters as codex does, not UTF-16 code units: 600,000 emoji are not too long', async () => {
    // Measured on codex-cli 0.171.0: 600,000 × U+1F600 on stdin (600,000 characters, 2,400,000
    // bytes) starts a turn; 1,048,577 ASCII characters get "Input exceeds the maximum length of
    // 1048576 characters" (`actual_chars` counts Unicode scalar values). JavaScript's
    // `length` counts each of these emoji twice.
    const run = await finished(await launch(`success ${'\u{1F600}'.repeat(600_000)}`));
    expect(run.errorMessage ?? '').not.toMatch(/characters; codex accepts at most/);
    expect(run).toMatchObject({ status: 'completed' });
  });

  it('cancels a run and every descendant, including a tool in its own session', async () => {
    for (const scenario of ['hang', 'hang-ignore-int']) {
      const runId = await launch(scenario);
      await waitFor(async () => (await findRunProcesses(runId)).length >= 2);
      const reply = await h.dispatcher.handle(inbound('1', `/cancel ${runId}`));
      expect(reply.kind).toBe('answered');
      expect(await findRunProcesses(runId)).toEqual([]);
      const run = await finished(runId);
      expect(run).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
      await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled · codex`));
    }
  });

  it('stops a tool that dropped its session and BATON_RUN_ID (setsid env -i), and says nothing survived (no cgroup: says what may have)', async () => {
    const support = await detectCgroupSupport();
    const runId = await launch('hang-escape');
    const toolPid = await waitForToolPid(runId);
    await waitFor(async () => readFileSync(`/proc/${toolPid}/cmdline`, 'utf8').startsWith('sleep\0'));
    expect(await findRunProcesses(runId)).not.toContain(toolPid);
    const reply = await h.dispatcher.handle(inbound('1', `/cancel ${runId}`));
    expect(reply.kind).toBe('answered');
    expect(isGone(toolPid)).toBe(true);
    expect(await finished(runId)).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled · codex`));
    if ('parent' in support) expect(outcome.text).not.toMatch(/may (still be running|have survived)/);
    else {
      // What a normal user without a delegated cgroup gets: the tree tracker saw the tool start
      // and stopped it, and the outcome cannot promise that nothing else left the tree.
      fallbackNote(support.unavailable);
      expect(outcome.text).toContain(
        'no cgroup for runs: a process that left the run’s process tree (e.g. started with setsid) may have survived',
      );
    }
  });

  it('stops a tool that moved into a child cgroup of the run cgroup, or says it may have survived', async () => {
    // Still inside the run's cgroup (cgroup.kill would end it), but not in its cgroup.procs.
    const support = await detectCgroupSupport();
    if (!('parent' in support)) {
      // Without a writable cgroup the tool cannot make one either (its mkdir fails as baton's
      // did): the run is followed by its tree, stopped, and the outcome says what may have survived.
      fallbackNote(support.unavailable);
      const runId = await launch('hang-cgroup-nest');
      await waitForToolPid(runId);
      expect((await h.dispatcher.handle(inbound('1', `/cancel ${runId}`))).kind).toBe('answered');
      expect(await finished(runId)).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
      const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled · codex`));
      expect(outcome.text).toMatch(/may have survived/);
      return;
    }
    const runId = await launch('hang-cgroup-nest');
    const toolPid = await waitForToolPid(runId);
    try {
      await waitFor(async () => readFileSync(`/proc/${toolPid}/cmdline`, 'utf8').startsWith('/bin/sleep\0'));
      expect(readFileSync(`/proc/${toolPid}/cgroup`, 'utf8')).toContain(`baton-${runId}/tool`);
      const reply = await h.dispatcher.handle(inbound('1', `/cancel ${runId}`));
      expect(reply.kind).toBe('answered');
      expect(await finished(runId)).toMatchObject({ status: 'cancelled', reason: 'owner_cancel' });
      const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled · codex`));
      expect({ gone: isGone(toolPid), warned: /may (still be running|have survived)/.test(outcome.text) }).not.toEqual({
        gone: false,
        warned: false,
      });
      expect(isGone(toolPid)).toBe(true);
      expect(existsSync(join(support.parent, `baton-${runId}`))).toBe(false);
    } finally {
      try {
        process.kill(toolPid, 'SIGKILL');
      } catch {
        // Already gone: the attack was stopped.
      }
      await waitFor(async () => isGone(toolPid));
      for (const dir of [join(support.parent, `baton-${runId}`, 'tool'), join(support.parent, `baton-${runId}`)])
        await rmdir(dir).catch(() => undefined);
    }
  });

  it('tells the owner once when the CLI retries its model, instead of staying silent', async () => {
    const runId = await launch('reconnecting');
    expect(await finished(runId)).toMatchObject({ status: 'completed', finalMessage: 'reached the model at last' });
    await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    const notices = h.channel.sent.filter((m) => m.text.startsWith(`[run ${runId}] codex is retrying`));
    expect(notices.map((m) => m.text)).toEqual([
      // The harness's CODEX_HOME has no auth.json: doctor's check says no login, and the notice says so.
      `[run ${runId}] codex is retrying: Reconnecting... 1/5 (stream disconnected before completion). The run continues; /cancel ${runId} to stop it. codex has no login in ${h.dir}/home/.codex: run \`CODEX_HOME=${h.dir}/home/.codex codex login\`.`,
    ]);
  });

  it('tells one who launched from a terminal to press Ctrl-C or run baton cancel, not /cancel', () => {
    expect(howToStop('terminal', 'hr_x')).toBe(
      'press Ctrl-C, or run `baton cancel hr_x` in another terminal, to stop it',
    );
    expect(howToStop('telegram', 'hr_x')).toBe('/cancel hr_x to stop it');
  });

  it('honours a cancel requested through the database by another process', async () => {
    const runId = await launch('hang');
    await waitFor(async () => (await findRunProcesses(runId)).length >= 2);
    h.supervisor.watchCancelRequests();
    const other = new RunStore(h.database.db);
    expect(await other.runs.requestCancel(runId, 'stop')).toBe(true);
    const run = await finished(runId);
    expect(run).toMatchObject({ status: 'cancelled', reason: 'stop', cancelRequested: 'stop' });
    expect(await findRunProcesses(runId)).toEqual([]);
    expect(await other.runs.requestCancel(runId, 'stop')).toBe(false);
  });

  it('leaves its own active runs alone when reconciling, and interrupts a dead process run', async () => {
    const runId = await launch('hang');
    await waitFor(async () => (await findRunProcesses(runId)).length >= 2);
    const host = h.supervisor.supervisorId.split(':')[0]!;
    const reconcile = () => reconcileAsDeadPeers();
    // The periodic pass beside a live run: nothing to do.
    expect(await reconcile()).toEqual([]);
    expect((await h.store.runs.getRun(runId))?.status).toBe('running');
    expect((await findRunProcesses(runId)).length).toBeGreaterThanOrEqual(2);
    // A run recorded under a dead process of this host is interrupted and its processes killed.
    const cwd = join(h.root, 'orphan');
    await mkdir(cwd, { recursive: true });
    const orphan = (await insertRun(h, cwd, { status: 'running', supervisor: `${host}:999999` })).id;
    const rows = await reconcile();
    expect(rows.map((r) => r.runId)).toEqual([orphan]);
    expect(await h.store.runs.getRun(orphan)).toMatchObject({ status: 'interrupted', reason: 'restart' });
    expect((await h.store.runs.getRun(runId))?.status).toBe('running');
    await h.supervisor.cancel(runId, 'owner_cancel');
  });

  it('at restart, kills what an orphaned run left in its cgroup, even without BATON_RUN_ID (no cgroup: what carries its BATON_RUN_ID)', async () => {
    const support = await detectCgroupSupport();
    if (!('parent' in support)) {
      fallbackNote(support.unavailable);
      await reconcileKillsByRunId(support);
      return;
    }
    const host = h.supervisor.supervisorId.split(':')[0]!;
    const cwd = join(h.root, 'orphan-cgroup');
    await mkdir(cwd, { recursive: true });
    const orphan = (await insertRun(h, cwd, { status: 'running', supervisor: `${host}:999998` })).id;
    // What a dead baton process left: the run's cgroup with a tool that dropped its session and env.
    const dir = join(support.parent, `baton-${orphan}`);
    await mkdir(dir);
    const tool = spawn('setsid', ['env', '-i', 'sleep', '598'], { stdio: 'ignore' });
    await writeFile(join(dir, 'cgroup.procs'), String(tool.pid));
    expect(await findRunProcesses(orphan)).toEqual([]);
    const rows = await reconcileAsDeadPeers(support);
    expect(rows.map((r) => r.runId)).toEqual([orphan]);
    await waitFor(async () => isGone(tool.pid!));
    expect(existsSync(dir)).toBe(false);
  });

  it('kills a run at its wall clock as failed/timeout, with every descendant', async () => {
    // The chat grammar takes whole minutes; the supervisor takes any duration in ms.
    const cwd = join(h.root, `repo${++repoCounter}`);
    await mkdir(cwd, { recursive: true });
    const started = await insertRun(h, cwd, { task: 'hang' });
    const runId = started.id as RunId;
    h.supervisor.start(started, { prompt: 'hang-ignore-int' }, 500);
    const run = await finished(runId);
    expect(run).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(await findRunProcesses(runId)).toEqual([]);
  });

  it('fails a run whose CLI cannot be spawned, without an unhandled error', async () => {
    const broken = await createHarness({ codexBinary: '/nonexistent/codex' });
    try {
      const cwd = join(broken.root, 'r');
      await mkdir(cwd);
      const result = await broken.dispatcher.handle(inbound('1', `/codex in:${cwd} success`));
      if (result.kind !== 'launched') throw new Error('not launched');
      await broken.supervisor.idle();
      expect(await broken.store.runs.getRun(result.runId)).toMatchObject({ status: 'failed', reason: 'spawn_failed' });
      const outcome = await broken.channel.waitForText(/failed/);
      expect(outcome.text).toContain('ENOENT');
      expect(outcome.text).toContain('Not resumable.');
    } finally {
      await broken.dispose();
    }
  });
});

describe('where no cgroup can be made (runs followed by their process tree)', () => {
  let tree: TestHarness;
  beforeAll(async () => {
    tree = await createHarness({ cgroups: { unavailable: 'test: no cgroup' } });
  });
  afterAll(async () => {
    await tree?.dispose();
  });

  it('still stops a setsid env -i tool it saw start, and the outcome says what may have survived', async () => {
    const runId = await launch('hang-escape', '', tree);
    const toolPid = await waitForToolPid(runId, tree);
    expect(isGone(toolPid)).toBe(false);
    expect((await tree.dispatcher.handle(inbound('1', `/cancel ${runId}`))).kind).toBe('answered');
    expect(isGone(toolPid)).toBe(true);
    expect(await finished(runId, tree)).toMatchObject({ status: 'cancelled' });
    const outcome = await tree.channel.waitForText(new RegExp(`^\\[run ${runId}\\] cancelled · codex`));
    expect(outcome.text).toContain(
      'no cgroup for runs: a process that left the run’s process tree (e.g. started with setsid) may have survived',
    );
  });
});

/**
 * One reconcile pass on this host in which every other process counts as dead, as at a restart;
 * `cgroups` is what this user has (a writable cgroup v2, or why not).
 */
function reconcileAsDeadPeers(
  cgroups?: Awaited<ReturnType<typeof detectCgroupSupport>>,
): ReturnType<typeof reconcileOrphanedRuns> {
  return reconcileOrphanedRuns({
    store: h.store,
    clock: systemClock,
    logger: silentLogger(),
    vendors: new Map([['codex', codexVendor]]),
    host: h.supervisor.supervisorId.split(':')[0]!,
    isAlive: () => false,
    isSupervisedHere: (id) => h.supervisor.supervises(id),
    startup: false,
    killGraceMs: 200,
    runsDir: h.runsDir,
    describeOutcome: outcomeText,
    words: harnessWords,
    ...(cgroups ? { cgroups } : {}),
  });
}

/** Says, in the test output, that a cgroup case checked the fallback a user without one gets. */
function fallbackNote(why: string): void {
  console.info(
    `no writable cgroup v2 for this user (${why}): checking the process-tree fallback a normal user gets instead`,
  );
}

/** Without cgroups, reconcile stops what an orphaned run left that still carries its BATON_RUN_ID. */
async function reconcileKillsByRunId(support: { unavailable: string }): Promise<void> {
  const host = h.supervisor.supervisorId.split(':')[0]!;
  const cwd = join(h.root, 'orphan-tree');
  await mkdir(cwd, { recursive: true });
  const orphan = (await insertRun(h, cwd, { status: 'running', supervisor: `${host}:999997` })).id;
  const tool = spawn('setsid', ['sleep', '597'], { stdio: 'ignore', env: { ...process.env, BATON_RUN_ID: orphan } });
  await waitFor(async () => (await findRunProcesses(orphan)).includes(tool.pid!));
  const rows = await reconcileAsDeadPeers(support);
  expect(rows.map((r) => r.runId)).toEqual([orphan]);
  await waitFor(async () => isGone(tool.pid!));
}

/** The pid of the tool the fake CLI reported starting (`item.started` → `tool_pid`). */
async function waitForToolPid(runId: string, harness = h): Promise<number> {
  let pid: string | undefined;
  await waitFor(async () => {
    const text = await readFile(join(harness.runsDir, runId, 'events.jsonl'), 'utf8').catch(() => '');
    pid = /"tool_pid":(\d+)/.exec(text)?.[1];
    return pid !== undefined;
  });
  return Number(pid);
}

/** True when `pid` no longer runs (absent, or a zombie waiting for its reaper). */
function isGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
