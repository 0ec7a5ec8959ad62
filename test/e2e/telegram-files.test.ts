/**
 * Files out on Telegram (issue #13 item 2) through `baton start`, with the real codex CLI
 * against the fake Responses server and the real grammY client against the fake Bot API
 * (`sendDocument` as multipart/form-data):
 * - a long answer goes as its first part plus `result.md` holding the whole outcome;
 * - a refused upload gives way to the remaining text parts;
 * - a run that edits the working tree sends `git diff --stat` and `hr_….patch`, computed from a
 *   snapshot taken at launch, that applies with `git apply` on the starting commit;
 * - the snapshot runs no command a hostile repository config names.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;
let startCommit: string;

const git = (args: string[], cwd = world.repo) =>
  execa('git', ['-c', 'user.email=t@example.invalid', '-c', 'user.name=t', ...args], {
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: '1' },
  });

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir')] });
  await writeFile(join(world.repo, 'tracked.txt'), 'line one\nline two\n');
  await writeFile(join(world.repo, 'notes.txt'), 'the owner was here\n');
  await writeFile(join(world.repo, '.gitignore'), '*.log\n');
  await git(['add', '-A']);
  await git(['commit', '-qm', 'start']);
  startCommit = (await git(['rev-parse', 'HEAD'])).stdout.trim();
});
afterAll(async () => world?.dispose());

/** An answer of `lines` numbered lines of 100 characters, about 100 × lines characters. */
function longAnswer(lines: number): string {
  return Array.from({ length: lines }, (_, i) => `line ${String(i + 1).padStart(4, '0')} ${'x'.repeat(89)}`).join('\n');
}

describe('Telegram files out', () => {
  it('a long answer goes as its first part plus result.md holding the whole outcome', async () => {
    const { telegram, openai } = world;
    const answer = longAnswer(200); // ~20,000 characters: 5 messages of 4096
    openai.enqueue({ kind: 'message', text: answer });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex explain everything at length', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const first = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    const doc = await telegram.waitForDocument(
      (d) => d.caption?.startsWith(`[run ${runId}]`) === true && d.filename === 'result.md',
      WAIT_MS,
    );
    const content = doc.content.toString('utf8');
    expect(content.startsWith(`[run ${runId}] completed`)).toBe(true);
    expect(content).toContain(answer);
    expect(first.text.length).toBeLessThanOrEqual(4096);
    expect(content.startsWith(first.text)).toBe(true);
    expect((doc.fields['reply_parameters'] as { message_id?: number }).message_id).toBe(10);
    // No continuation parts: the file carries the rest.
    expect(telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] (`))).toEqual([]);
  });

  it('an answer of three messages or fewer goes as text only', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: longAnswer(60) }); // ~6,000 characters: 2 messages
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex explain briefly', 15));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 15 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] (2/2)`), WAIT_MS);
    expect(telegram.documents.filter((d) => d.caption?.includes(runId))).toEqual([]);
  });

  it('when Telegram refuses result.md, the remaining parts are sent as text', async () => {
    const { telegram, openai } = world;
    const answer = longAnswer(200);
    openai.enqueue({ kind: 'message', text: answer });
    telegram.failNext('sendDocument', {
      status: 400,
      body: { ok: false, error_code: 400, description: 'Bad Request: file is too big' },
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex explain everything again', 20));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 20 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const first = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    const last = await telegram.waitForSent(
      (m) => /^\[run hr_[0-9a-f]{12}\] \((\d+)\/\1\)\n/.test(m.text) && m.text.startsWith(`[run ${runId}]`),
      WAIT_MS,
    );
    const count = Number(/\((\d+)\//.exec(last.text)![1]);
    expect(count).toBeGreaterThan(3);
    const rest = telegram.sent
      .filter((m) => m.text.startsWith(`[run ${runId}] (`))
      .map((m) => m.text.slice(m.text.indexOf('\n') + 1));
    expect(rest).toHaveLength(count - 1);
    // Telegram shows a message without its trailing newline: the cuts fall at line ends.
    expect([first.text, ...rest].join('\n')).toContain(answer);
    expect(telegram.calls.filter((c) => c.method === 'sendDocument' && c.status === 400)).toHaveLength(1);
  });

  it('a run that edits files sends the diff stat and hr_….patch, which applies on the starting commit; earlier changes are not in it', async () => {
    const { telegram, openai } = world;
    // Already there at launch: not the run's.
    await writeFile(join(world.repo, 'notes.txt'), 'the owner was here\nand edited this before the run\n');
    await writeFile(join(world.repo, 'draft.txt'), 'an untracked draft from before\n');
    openai.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        arguments: {
          cmd: "printf 'line three\\n' >> tracked.txt && printf 'brand new\\n' > added.txt && printf '\\000\\001\\002binary' > blob.bin && echo noise > build.log",
        },
      },
      { kind: 'message', text: 'Edited tracked.txt and added two files.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex edit the files', 30));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 30 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(outcome.text).toContain(`Changes (full diff in ${runId}.patch):`);
    expect(outcome.text).toMatch(/3 files changed, 2 insertions\(\+\)/);
    expect(outcome.text).toMatch(/tracked\.txt +\| +1 \+/);
    expect(outcome.text).not.toContain('notes.txt');
    expect(outcome.text).not.toContain('draft.txt');
    const patch = await telegram.waitForDocument((d) => d.filename === `${runId}.patch`, WAIT_MS);
    const text = patch.content.toString('utf8');
    expect(text).toContain('diff --git a/tracked.txt b/tracked.txt');
    expect(text).toContain('GIT binary patch');
    for (const absent of ['notes.txt', 'draft.txt', 'build.log']) expect(text).not.toContain(absent);
    // The patch applies on a fresh clone of the starting commit and gives the run's files.
    const clone = await mkdtemp(join(world.dir, 'clone-'));
    await execa('git', ['clone', '-q', world.repo, clone]);
    await git(['checkout', '-q', startCommit], clone);
    await writeFile(join(clone, 'run.patch'), patch.content);
    await git(['apply', '--check', 'run.patch'], clone);
    await git(['apply', 'run.patch'], clone);
    expect(await readFile(join(clone, 'tracked.txt'), 'utf8')).toBe('line one\nline two\nline three\n');
    expect(await readFile(join(clone, 'blob.bin'))).toEqual(await readFile(join(world.repo, 'blob.bin')));
    await rm(clone, { recursive: true, force: true });
    // The user's index is untouched: nothing the run or the snapshot did is staged.
    expect((await git(['diff', '--cached', '--name-only'])).stdout).toBe('');
    const runDir = join(world.batonHome, 'harness', 'runs', runId);
    expect(existsSync(join(runDir, 'snapshot.index'))).toBe(false);
  });

  it('a run that changes nothing carries no diff and no patch', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'Nothing to change.' });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex look only', 40));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 40 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(outcome.text).not.toContain('Changes');
    expect(telegram.documents.some((d) => d.filename === `${runId}.patch`)).toBe(false);
  });

  it('the snapshot runs no command the repository config names (fsmonitor, filter driver, hooks)', async () => {
    const { telegram, openai } = world;
    const marker = join(world.dir, 'hostile-ran');
    // codex itself runs git in the repository (with these commands live: that is the agent's
    // posture, not baton's); only a run outside the agent's environment, i.e. baton's own git,
    // leaves the marker. BATON_RUN_ID is in every agent process's environment, never in baton's.
    const touch = `[ -n "$BATON_RUN_ID" ] || touch ${marker}`;
    await git(['config', 'core.fsmonitor', touch]);
    await git(['config', 'filter.evil.clean', `${touch}; cat`]);
    await git(['config', 'filter.evil.process', touch]);
    await git(['config', 'core.hooksPath', join(world.dir, 'hooks')]);
    await writeFile(join(world.repo, '.gitattributes'), '* filter=evil\n');
    try {
      openai.enqueue(
        { kind: 'tool_call', name: 'exec_command', arguments: { cmd: "printf 'hostile\\n' > hostile.txt" } },
        { kind: 'message', text: 'Wrote hostile.txt.' },
      );
      telegram.pushUpdate(world.privateMessage(OWNER, '/codex write hostile.txt', 50));
      const started = await telegram.waitForSent((m) => replyTarget(m) === 50 && m.text.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.text);
      const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
      expect(outcome.text).toContain('hostile.txt');
      await telegram.waitForDocument((d) => d.filename === `${runId}.patch`, WAIT_MS);
      expect(existsSync(marker), 'a command named by the repository config ran').toBe(false);
    } finally {
      await git(['config', '--unset', 'core.fsmonitor']);
      await git(['config', '--remove-section', 'filter.evil']);
      await git(['config', '--unset', 'core.hooksPath']);
      await rm(join(world.repo, '.gitattributes'));
    }
  });
});
