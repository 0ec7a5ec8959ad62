/**
 * How a run's end is judged with real processes: fake CLIs on disk (shell scripts, which start in
 * about a millisecond) that print a whole stream at once, finish without exiting, leave a
 * descendant holding stdout, end on an error line, or replay a real claude capture.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { testEngine } from '../support/db.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';

const CLAUDE_197 = fileURLToPath(new URL('../fixtures/vendor-streams/claude-2.1.197-more/', import.meta.url));
const CLAUDE_332 = fileURLToPath(new URL('../fixtures/vendor-streams/claude-2.1.332/', import.meta.url));

const line = (event: unknown): string => JSON.stringify(event);
const THREAD = line({ type: 'thread.started', thread_id: 'thread-burst' });
const ANSWER = line({ type: 'item.completed', item: { id: 'i1', type: 'agent_message', text: 'burst done' } });
const DONE = line({ type: 'turn.completed', usage: { input_tokens: 7, cached_input_tokens: 0, output_tokens: 3, reasoning_output_tokens: 0 } });

/** A stream as a shell `printf` of single-quoted lines (none of the events holds a quote). */
const printf = (...lines: string[]): string => `printf '%s\\n' ${lines.map((l) => `'${l}'`).join(' ')}`;

let h: TestHarness;
let bin: string;
let repoCounter = 0;

/** Writes an executable `/bin/sh` script and returns its path. */
async function script(name: string, body: string): Promise<string> {
  const path = join(bin, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

async function launch(harness: TestHarness, vendor: 'codex' | 'claude', task: string, options = ''): Promise<RunId> {
  const cwd = join(harness.root, `repo${++repoCounter}`);
  await mkdir(cwd, { recursive: true });
  const result = await harness.dispatcher.handle(inbound('1', `/${vendor} in:${cwd} ${options} ${task}`.replace(/\s+/g, ' ')));
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return result.runId;
}

async function finished(harness: TestHarness, runId: RunId) {
  await harness.supervisor.idle();
  return (await harness.store.getRun(runId))!;
}

/** A harness whose codex (and claude) is the given script. */
async function harnessWith(codex: string, claude?: string, limits: Parameters<typeof createHarness>[0] = {}): Promise<TestHarness> {
  return createHarness({ codexBinary: codex, ...(claude ? { claudeBinary: claude } : {}), ...limits });
}

beforeAll(async () => {
  h = await createHarness();
  bin = join(h.dir, 'bin');
  await mkdir(bin);
});
afterAll(async () => {
  await h?.dispose();
});

describe(`judging a run's end (${testEngine})`, () => {
  it('reads a stream printed in full within a millisecond of the start: 50 of 50 complete with session and stderr', async () => {
    const burst = await script('burst', `${printf(THREAD, ANSWER, DONE)}\necho 'burst warning' >&2`);
    const harness = await harnessWith(burst);
    try {
      const statuses: string[] = [];
      for (let i = 0; i < 50; i++) {
        const run = await finished(harness, await launch(harness, 'codex', 'go'));
        statuses.push(`${run.status}/${run.reason ?? ''}/${run.vendorSessionId ?? ''}/${run.finalMessage ?? ''}`);
      }
      expect(statuses.filter((s) => s === 'completed//thread-burst/burst done')).toHaveLength(50);
    } finally {
      await harness.dispose();
    }
  });

  it('keeps the stderr of a burst that fails', async () => {
    const failing = await script('burst-fail', `echo 'fatal: config.toml is not valid' >&2\nexit 3`);
    const harness = await harnessWith(failing);
    try {
      const runId = await launch(harness, 'codex', 'go');
      const run = await finished(harness, runId);
      expect(run).toMatchObject({ status: 'failed', reason: 'no_terminal_event', exitCode: 3 });
      const outcome = await harness.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed`));
      expect(outcome.text).toContain('fatal: config.toml is not valid');
    } finally {
      await harness.dispose();
    }
  });

  it.each([
    ['codex', printf(THREAD, ANSWER, DONE)],
    ['claude 2.1.197', `cat ${CLAUDE_197}plain.jsonl`],
    ['claude 2.1.332', `cat ${CLAUDE_332}plain.jsonl`],
  ])('%s: a CLI that does not exit after its terminal event is stopped after the grace and completes', async (name, print) => {
    const lingering = await script(`linger-${name.replace(/\W/g, '')}`, `${print}\nexec sleep 1000`);
    const harness = await harnessWith(lingering, lingering, { limits: { finishGraceMs: 300 } });
    try {
      const runId = await launch(harness, name.startsWith('codex') ? 'codex' : 'claude', 'go');
      const run = await finished(harness, runId);
      expect(run).toMatchObject({ status: 'completed', reason: null });
      expect(await findRunProcesses(runId)).toEqual([]);
      const outcome = await harness.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
      expect(outcome.text.split('\n')[1]).toBe('The CLI had to be stopped after it finished.');
    } finally {
      await harness.dispose();
    }
  });

  it('restarts the grace on every later event: a second claude turn after the first result is awaited', async () => {
    const first = (await readFile(join(CLAUDE_197, 'plain.jsonl'), 'utf8')).trim();
    // Two results, 0.2 s apart, with a grace of 0.3 s: the second (failing) one decides.
    const secondResult = line({ type: 'result', subtype: 'success', is_error: true, result: 'API Error: 500 overloaded', session_id: 's', usage: { input_tokens: 5, output_tokens: 1 } });
    const twoTurns = await script('two-turns', `cat <<'EOF'\n${first}\nEOF\nsleep 0.2\n${printf(secondResult)}\nexit 1`);
    const harness = await harnessWith(twoTurns, twoTurns, { limits: { finishGraceMs: 300 } });
    try {
      const run = await finished(harness, await launch(harness, 'claude', 'go'));
      expect(run).toMatchObject({ status: 'failed', reason: 'vendor_error', errorMessage: 'API Error: 500 overloaded', exitCode: 1 });
      // 1000 + 100 cache read + 20 out from the captured result, then 5 + 1.
      expect(run.usage).toMatchObject({ inputTokens: 1105, outputTokens: 21 });
    } finally {
      await harness.dispose();
    }
  });

  it.each([
    ['in its process group', 'sleep 1000 &'],
    ['in a session of its own', 'setsid sleep 1000 &'],
  ])('a descendant %s holding stdout does not hang a finished run; it is stopped', async (name, spawnDescendant) => {
    const holder = await script(`holder-${name.replace(/\W/g, '')}`, `${spawnDescendant}\n${printf(THREAD, ANSWER, DONE)}\nexit 0`);
    const harness = await harnessWith(holder, undefined, { limits: { exitDrainMs: 300 } });
    try {
      const runId = await launch(harness, 'codex', 'go');
      const run = await finished(harness, runId);
      expect(run).toMatchObject({ status: 'completed', reason: null, exitCode: 0, finalMessage: 'burst done' });
      expect(await findRunProcesses(runId)).toEqual([]);
    } finally {
      await harness.dispose();
    }
  });

  it("puts codex's last error words first when it exits without a terminal event, and shows the last agent message", async () => {
    const words = 'stream disconnected before completion: error sending request for url (http://127.0.0.1:9/v1/responses)';
    const erring = await script('codex-error', `${printf(THREAD, ANSWER, line({ type: 'error', message: words }))}\nexit 1`);
    const harness = await harnessWith(erring);
    try {
      const runId = await launch(harness, 'codex', 'go');
      const run = await finished(harness, runId);
      expect(run).toMatchObject({ status: 'failed', reason: 'no_terminal_event', exitCode: 1 });
      const outcome = await harness.channel.waitForText(new RegExp(`^\\[run ${runId}\\] failed`));
      const lines = outcome.text.split('\n');
      expect(lines[1]).toBe(words);
      expect(lines[2]).toBe('The CLI ended without reporting an outcome: the process exited with code 1.');
      expect(outcome.text).toContain('Last agent message:\nburst done');
    } finally {
      await harness.dispose();
    }
  });

  it.each([CLAUDE_197, CLAUDE_332])('a claude run whose Bash call was denied is never "completed" in silence (%s)', async (dir) => {
    const denied = await script(`denied-${dir.includes('332') ? '332' : '197'}`, `cat ${dir}denied-default.jsonl`);
    const harness = await harnessWith(denied, denied);
    try {
      const runId = await launch(harness, 'claude', 'create denied.txt');
      const run = await finished(harness, runId);
      expect(run).toMatchObject({ status: 'completed', denials: [{ tool: 'Bash', detail: 'touch denied.txt' }] });
      const outcome = await harness.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
      const lines = outcome.text.split('\n');
      expect(lines[0]).toMatch(/ · 1 tool call denied$/);
      expect(lines.slice(1, 4)).toEqual([
        'The CLI denied this tool call; what it was for was not done:',
        '- Bash: touch denied.txt',
        'To let claude write files in the project, add mode:acceptEdits to the request (baton ask takes it too).',
      ]);
      await harness.dispatcher.handle(inbound('1', `/runs ${runId}`));
      const view = await harness.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed · 1 tool call denied\\n`));
      expect(view.text).toContain('- Bash: touch denied.txt');
    } finally {
      await harness.dispose();
    }
  });
});
