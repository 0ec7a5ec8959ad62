/**
 * An answer longer than max_event_bytes, printed by a real child process in each vendor's event
 * shape: it is spilled to the run's directory, parsed, and delivered whole as result.md; a line
 * past the spill cap is dropped with a note that says where its raw bytes are.
 */
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../src/core/ids.js';
import { testEngine } from '../support/database.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';

const KiB = 1024;
/** The longest event line the harness accepts in memory. */
const MAX_EVENT_BYTES = 64 * KiB;
/** The run artifact cap, which is also the spill cap of one line. */
const MAX_ARTIFACT_BYTES = 1024 * KiB;

/**
 * One fake CLI for both vendors (node, so it can print a long line): the scenario file in its
 * working directory says the vendor and the answer's size in KiB. The answer is distinct
 * characters with a marked end, so a cut or a lost part shows.
 */
const FAKE = String.raw`#!/usr/bin/env node
import { readFileSync } from 'node:fs';
const [vendor, kib] = readFileSync('.scenario', 'utf8').trim().split(' ');
let text = '';
for (let i = 0; text.length < Number(kib) * 1024; i++) text += 'line ' + i + ' of the long answer é\n';
text += 'THE END';
const emit = (event) => process.stdout.write(JSON.stringify(event) + '\n');
if (vendor === 'codex') {
  emit({ type: 'thread.started', thread_id: 'thread-big' });
  emit({ type: 'item.completed', item: { id: 'item_1', type: 'agent_message', text } });
  emit({ type: 'turn.completed', usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 5, reasoning_output_tokens: 0 } });
} else {
  emit({ type: 'system', subtype: 'init', session_id: 'sess-big', tools: [], model: 'fake' });
  emit({ type: 'assistant', session_id: 'sess-big', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text }] } });
  emit({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: text, session_id: 'sess-big', usage: { input_tokens: 10, output_tokens: 5 } });
}
`;

let h: TestHarness;
let fakeDir: string;
let repoCounter = 0;

async function launch(vendor: 'codex' | 'claude', kib: number): Promise<RunId> {
  const cwd = join(h.root, `repo${++repoCounter}`);
  await mkdir(cwd, { recursive: true });
  await writeFile(join(cwd, '.scenario'), `${vendor} ${kib}`);
  const result = await h.dispatcher.handle(inbound('1', `/${vendor} in:${cwd} answer at length`));
  if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
  return result.runId;
}

beforeAll(async () => {
  fakeDir = await mkdtemp(join(tmpdir(), 'baton-big-answer-'));
  const fake = join(fakeDir, 'fake-cli.mjs');
  await writeFile(fake, FAKE);
  await chmod(fake, 0o755);
  h = await createHarness({
    codexBinary: fake,
    claudeBinary: fake,
    limits: { maxEventBytes: MAX_EVENT_BYTES, maxRunArtifactBytes: MAX_ARTIFACT_BYTES },
  });
});
afterAll(async () => {
  await h?.dispose();
  await rm(fakeDir, { recursive: true, force: true });
});

describe(`an answer over max_event_bytes (${testEngine})`, () => {
  it.each(['codex', 'claude'] as const)(
    '%s: a 300 KiB answer completes and arrives whole as result.md',
    async (vendor) => {
      const runId = await launch(vendor, 300);
      await h.supervisor.idle();
      const run = (await h.store.runs.getRun(runId))!;
      expect(run).toMatchObject({ status: 'completed', reason: null });
      expect(run.finalMessage?.length).toBeGreaterThan(300 * KiB);
      expect(run.finalMessage?.endsWith('THE END')).toBe(true);
      await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
      const document = await waitForDocument(runId);
      const body = document.content.toString('utf8');
      expect(body).toContain(run.finalMessage!);
      expect(body).not.toContain('finished without a final message');
      // The spill is gone once its line was read: the answer lives in result.md.
      await expect(stat(join(h.runsDir, runId, 'oversized-line-1.jsonl'))).rejects.toThrow();
    },
  );

  it('drops a line past the spill cap and says where its raw bytes are', async () => {
    const runId = await launch('codex', 1500);
    await h.supervisor.idle();
    const run = (await h.store.runs.getRun(runId))!;
    expect(run.status).toBe('completed');
    const outcome = await h.channel.waitForText(new RegExp(`^\\[run ${runId}\\] completed`));
    const spill = join(h.runsDir, runId, 'oversized-line-1.jsonl');
    const all = [
      outcome.text,
      ...h.channel.documents.filter((d) => d.caption?.includes(runId)).map((d) => d.content.toString('utf8')),
    ].join('\n');
    expect(all).toContain(spill);
    expect((await stat(spill)).size).toBeLessThanOrEqual(MAX_ARTIFACT_BYTES);
  });
});

async function waitForDocument(runId: RunId) {
  for (;;) {
    const hit = h.channel.documents.find((d) => d.filename === 'result.md' && d.caption?.includes(runId));
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 20));
  }
}
