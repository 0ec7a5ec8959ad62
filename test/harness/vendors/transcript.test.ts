/**
 * The transcript readers of both vendors on recorded real streams (codex 0.171.0, claude
 * 2.1.332): a command with its exit code and output, a file change, the agent's message, a
 * tool's result joined to its call.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { claudeTranscript } from '../../../src/harness/vendors/claude-transcript.js';
import { codexAppServerTranscript } from '../../../src/harness/vendors/codex-app-server/transcript.js';
import { codexTranscript } from '../../../src/harness/vendors/codex-transcript.js';
import { foldTranscript, type TranscriptReader } from '../../../src/harness/vendors/transcript.js';

async function stepsOf(file: string, reader: TranscriptReader) {
  const text = await readFile(new URL(`../../fixtures/vendor-streams/${file}`, import.meta.url), 'utf8');
  const events = text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as unknown);
  return foldTranscript(events.flatMap((e) => reader(e)));
}

describe('transcript readers', () => {
  it('codex: each command once, with its exit code and output; file changes; the answer', async () => {
    const steps = await stepsOf('codex-items.jsonl', codexTranscript);
    const commands = steps.filter((s) => s.kind === 'command');
    expect(commands).toEqual([
      expect.objectContaining({ command: "/bin/bash -lc 'echo hi && ls'", exitCode: 0, failed: false, done: true }),
      expect.objectContaining({ command: "/bin/bash -lc 'exit 3'", exitCode: 3, failed: true, done: true }),
    ]);
    expect(commands[0]).toMatchObject({ output: expect.stringContaining('hi\na.txt\n') });
    expect(steps).toContainEqual({
      kind: 'files',
      changes: [
        { path: '/home/dev/work/repo/a.txt', change: 'update' },
        { path: '/home/dev/work/repo/new.txt', change: 'add' },
      ],
    });
    expect(steps).toContainEqual(expect.objectContaining({ kind: 'tool', name: 'echo/echo', failed: true }));
    expect(steps.at(-1)).toEqual({ kind: 'message', text: 'All done: fixed the bug.' });
  });

  it('claude: a Bash call is a command whose result joins it; the result closes the transcript', async () => {
    const steps = await stepsOf('claude-tool-use.jsonl', claudeTranscript);
    const command = steps.find((s) => s.kind === 'command');
    expect(command).toMatchObject({
      kind: 'command',
      command: 'echo hi from bash > b.txt; cat b.txt',
      failed: true,
      done: true,
      output: expect.stringContaining('was blocked'),
    });
    expect(steps.filter((s) => s.kind === 'command')).toHaveLength(1);
    expect(steps).toContainEqual({ kind: 'message', text: 'All done: fixed the bug.' });
    expect(steps.at(-1)).toMatchObject({ kind: 'result', failed: false });
  });

  it('codex app-server: item notifications become the same steps, and exec events still read as exec', async () => {
    const item = (method: string, body: Record<string, unknown>) => ({
      method,
      params: { threadId: 't', turnId: '1', item: body },
    });
    const command = { type: 'commandExecution', id: 'c1', command: "/bin/bash -lc 'exit 3'", status: 'completed' };
    const messages = [
      item('item/started', { ...command, status: 'inProgress', aggregatedOutput: null, exitCode: null }),
      item('item/completed', { ...command, status: 'failed', aggregatedOutput: 'no\n', exitCode: 3 }),
      item('item/completed', {
        type: 'fileChange',
        id: 'f1',
        status: 'completed',
        changes: [{ path: 'a.txt', kind: { type: 'update', move_path: null }, diff: '' }],
      }),
      item('item/completed', { type: 'agentMessage', id: 'm1', text: 'Tried it.' }),
      { method: 'turn/completed', params: { turn: { id: '1', status: 'failed', error: { message: 'gave up' } } } },
    ];
    expect(foldTranscript(messages.flatMap((m) => codexAppServerTranscript(m)))).toEqual([
      {
        kind: 'command',
        id: 'c1',
        command: "/bin/bash -lc 'exit 3'",
        output: 'no\n',
        exitCode: 3,
        failed: true,
        done: true,
      },
      { kind: 'files', changes: [{ path: 'a.txt', change: 'update' }] },
      { kind: 'message', text: 'Tried it.' },
      { kind: 'result', text: 'gave up', failed: true },
    ]);
    expect(await stepsOf('codex-items.jsonl', codexAppServerTranscript)).toEqual(
      await stepsOf('codex-items.jsonl', codexTranscript),
    );
  });
});
