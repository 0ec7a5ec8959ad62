/**
 * How a run's end is judged with real processes: fake CLIs on disk (shell scripts, which start in
 * about a millisecond) that print a whole stream at once, finish without exiting, leave a
 * descendant holding stdout, end on an error line, or replay a real claude capture.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { testEngine } from '../support/database.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';
import { waitFor } from '../support/wait.js';

const CLAUDE_197 = fileURLToPath(new URL('../fixtures/vendor-streams/claude-2.1.197-more/', import.meta.url));
const CLAUDE_332 = fileURLToPath(new URL('../fixtures/vendor-streams/claude-2.1.332/', import.meta.url));

const line = (event: unknown): string => JSON.stringify(event);
const THREAD = line({ type: 'thread.started', thread_id: 'thread-burst' });
const ANSWER = line({ type: 'item.completed', item: { id: 'i1', type: 'agent_message', text: 'burst done' } });
const DONE = line({
  type: 'turn.completed',
  usage: { input_tokens: 7, cached_input_tokens: 0, output_tokens: 3, reasoning_output_tokens: 0 },
});

/** A stream as a shell `printf` of single-quoted lines (none of the events holds a quote). */
const printf = (...lines: string[]): string => `printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')}`;

let h: TestHarness;
let repoCounter = 0;

/**
 * One fake CLI for both vendors, a `/bin/sh` script (it starts in about a millisecond, like a
 * CLI that prints its stream at once) whose behaviour is chosen by the task. The task goes on
 * stdin once the launch snapshot is taken; this CLI prints without waiting for it, so its
 * scenario comes from `.scenario` in its working directory, written by {@link launch}.
 */
async function writeFakeCli(dir: string): Promise<string> {
  const firstClaudeTurn = (await readFile(join(CLAUDE_197, 'plain.jsonl'), 'utf8')).trim();
  const failingTurn = line({
    type: 'result',
    subtype: 'success',
    is_error: true,
    result: 'API Error: 500 overloaded',
    session_id: 's',
    usage: { input_tokens: 5, output_tokens: 1 },
  });
  const codexError = line({ type: 'error', message: CODEX_ERROR_WORDS });
  const scenarios: Record<string, string> = {
    burst: `${printf(THREAD, ANSWER, DONE)}\necho 'burst warning' >&2`,
    'burst-fail': `echo 'fatal: config.toml is not valid' >&2\nexit 3`,
    'linger-codex': `${printf(THREAD, ANSWER, DONE)}\nexec sleep 1000`,
    'linger-claude197': `cat ${CLAUDE_197}plain.jsonl\nexec sleep 1000`,
    'linger-claude332': `cat ${CLAUDE_332}plain.jsonl\nexec sleep 1000`,
    'two-turns': `cat <<'EOF'\n${firstClaudeTurn}\nEOF\nsleep 0.2\n${printf(failingTurn)}\nexit 1`,
    'holder-group': `sleep 1000 &\n${printf(THREAD, ANSWER, DONE)}\nexit 0`,
    'holder-session': `setsid sleep 1000 &\n${printf(THREAD, ANSWER, DONE)}\nexit 0`,
    'codex-error': `${printf(THREAD, ANSWER, codexError)}\nexit 1`,
    'denied-197': `cat ${CLAUDE_197}denied-default.jsonl`,
    'denied-332': `cat ${CLAUDE_332}denied-default.jsonl`,
  };
  const cases = Object.entries(scenarios)
    .map(([name, body]) => `  ${name})\n${body}\n    ;;`)
    .join('\n');
  const path = join(dir, 'fake-cli');
  await writeFile(
    path,
    `#!/bin/sh\nlast=$(cat .scenario)\ncase "$last" in\n${cases}\n  *) echo "fake-cli: unknown scenario $last" >&2; exit 2 ;;\nesac\n`,
  );
  await chmod(path, 0o755);
  return path;
}

const CODEX_ERROR_WORDS =
  'stream disconnected before completion: error sending request for url (http://127.0.0.1:9/v1/responses)';
let fakeCli: string;
let fakeDir: string;

async function launch(harness: TestHarness, vendor: 'codex' | 'claude', task: string): Promise<RunId> {
  const cwd = join(harness.root, `repo${++repoCounter}`);
  await mkdir(cwd, { recursive: true });
  await writeFile(join(cwd, '.scenario'), task);
  const result = await harness.dispatcher.handle(inbound('1', `/${vendor} in:${cwd} ${task}`));
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return result.runId;
}

async function finished(harness: TestHarness, runId: RunId) {
  await harness.supervisor.idle();
  return (await harness.store.runs.getRun(runId))!;
}

beforeAll(async () => {
  fakeDir = await mkdtemp(join(tmpdir(), 'baton-fake-cli-'));
  fakeCli = await writeFakeCli(fakeDir);
  // A grace of 1 s after the terminal event, and a drain of 0.3 s after the exit.
  h = await createHarness({
    codexBinary: fakeCli,
    claudeBinary: fakeCli,
    limits: { finishGraceMs: 1_000, exitDrainMs: 300 },
  });
});
afterAll(async () => {
  await h?.dispose();
  await rm(fakeDir, { recursive: true, force: true });
});

describe(`judging a run's end (${testEngine})`, () => {
  it('reads a stream printed in full within a millisecond of the start: 50 of 50 complete with session and stderr', async () => {
    const statuses: string[] = [];
    for (let i = 0; i < 50; i++) {
      const run = await finished(h, await launch(h, 'codex', 'burst'));
      statuses.push(`${run.status}/${run.reason ?? ''}/${run.vendorSessionId ?? ''}/${run.finalMessage ?? ''}`);
    }
    expect(statuses.filter((s) => s === 'completed//thread-burst/burst done')).toHaveLength(50);
  });

  it('keeps the stderr of a burst that fails', async () => {
    const runId = await launch(h, 'codex', 'burst-fail');
    const run = await finished(h, runId);
    expect(run).toMatchObject({ status: 'failed', reason: 'no_terminal_event', exitCode: 3 });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed`));
    expect(outcome.text).toContain('fatal: config.toml is not valid');
  });

  it.each([
    ['codex', 'linger-codex'],
    ['claude', 'linger-claude197'],
    ['claude', 'linger-claude332'],
  ] as const)(
    '%s (%s): a CLI that does not exit after its terminal event is stopped after the grace and completes',
    async (vendor, scenario) => {
      const runId = await launch(h, vendor, scenario);
      const run = await finished(h, runId);
      expect(run).toMatchObject({ status: 'completed', reason: null });
      expect(await findRunProcesses(runId)).toEqual([]);
      const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
      expect(outcome.text.split('\n')[1]).toBe('The CLI had to be stopped after it finished.');
    },
  );

  it('restarts the grace on every later event: a second claude turn after the first result is awaited and decides', async () => {
    // Two results 0.2 s apart, within the 1 s grace: the second (failing) one decides.
    const run = await finished(h, await launch(h, 'claude', 'two-turns'));
    expect(run).toMatchObject({
      status: 'failed',
      reason: 'vendor_error',
      errorMessage: 'API Error: 500 overloaded',
      exitCode: 1,
    });
    // 1000 + 100 cache read + 20 out from the captured result, then 5 + 1.
    expect(run.usage).toMatchObject({ inputTokens: 1105, outputTokens: 21 });
  });

  it.each(['holder-group', 'holder-session'])(
    '%s: a descendant holding stdout does not hang a finished run; it is stopped',
    async (scenario) => {
      const runId = await launch(h, 'codex', scenario);
      const run = await finished(h, runId);
      expect(run).toMatchObject({ status: 'completed', reason: null, exitCode: 0, finalMessage: 'burst done' });
      expect(await findRunProcesses(runId)).toEqual([]);
    },
  );

  it.each(['holder-group', 'holder-session'])(
    '%s: the descendants holding stdout of an exited CLI are killed at the end of the drain, not given the kill grace too',
    async (scenario) => {
      // The CLI has exited: nothing is left to ask to stop, so waiting the kill grace (here 60 s)
      // for its leftovers only made the run end that much after the drain.
      const killGraceMs = 60_000;
      const harness = await createHarness({ codexBinary: fakeCli, limits: { exitDrainMs: 300, killGraceMs } });
      try {
        const run = await finished(harness, await launch(harness, 'codex', scenario));
        expect(run).toMatchObject({ status: 'completed', reason: null, exitCode: 0 });
        expect(await findRunProcesses(run.id)).toEqual([]);
        expect(run.endedAt!.getTime() - run.startedAt!.getTime()).toBeLessThan(killGraceMs / 2);
      } finally {
        await harness.dispose();
      }
    },
    120_000,
  );

  it('a cancel that arrives after the CLI exited on its own leaves the outcome alone and says the run had finished', async () => {
    // A long drain keeps the run supervised after its CLI exited, the window a cancel can hit.
    const harness = await createHarness({ codexBinary: fakeCli, limits: { exitDrainMs: 60_000 } });
    try {
      const runId = await launch(harness, 'codex', 'holder-group');
      let rootPid: number | null = null;
      await waitFor(
        async () => {
          rootPid ??= (await harness.store.runs.getRun(runId))?.pid ?? null;
          const left = await findRunProcesses(runId);
          return rootPid !== null && left.length > 0 && !left.includes(rootPid);
        },
        { what: "the CLI's root process to exit, leaving its group behind", timeoutMs: 100_000, intervalMs: 20 },
      );
      expect(await harness.supervisor.cancel(runId, 'owner_cancel')).toEqual({ kind: 'ended', status: 'completed' });
      expect(await finished(harness, runId)).toMatchObject({ status: 'completed', finalMessage: 'burst done' });
      expect(await findRunProcesses(runId)).toEqual([]);
    } finally {
      await harness.dispose();
    }
  });

  it("puts codex's last error words first when it exits without a terminal event, and shows the last agent message", async () => {
    const runId = await launch(h, 'codex', 'codex-error');
    const run = await finished(h, runId);
    expect(run).toMatchObject({ status: 'failed', reason: 'no_terminal_event', exitCode: 1 });
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed`));
    const lines = outcome.text.split('\n');
    expect(lines[1]).toBe(CODEX_ERROR_WORDS);
    expect(lines[2]).toBe('The CLI ended without reporting an outcome: the process exited with code 1.');
    expect(outcome.text).toContain('Last agent message:\nburst done');
  });

  it.each(['denied-197', 'denied-332'])(
    '%s: a claude run whose Bash call was denied is never "completed" in silence',
    async (scenario) => {
      const runId = await launch(h, 'claude', scenario);
      const run = await finished(h, runId);
      expect(run).toMatchObject({ status: 'completed', denials: [{ tool: 'Bash', detail: 'touch denied.txt' }] });
      const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
      const lines = outcome.text.split('\n');
      expect(lines[0]).toMatch(/ · 1 tool call denied$/);
      expect(lines.slice(1, 4)).toEqual([
        'The CLI denied this tool call; what it was for was not done:',
        '- Bash: touch denied.txt',
        'To let claude write files in the project, add mode:acceptEdits to the request (baton ask takes it too).',
      ]);
      await h.dispatcher.handle(inbound('1', `/runs ${runId}`));
      const view = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed · 1 tool call denied\\n`));
      expect(view.text).toContain('- Bash: touch denied.txt');
    },
  );
});
