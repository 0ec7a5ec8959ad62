/**
 * A git worktree per run (issue #17) through `baton start`: the real grammY client against the
 * fake Bot API, the real codex CLI against the fake Responses API, real git, all on 127.0.0.1.
 */
import { execa } from 'execa';
import { mkdir, readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { inputItemsOf, type RecordedRequest } from '../fakes/fake-openai.js';
import { CLI } from '../support/cli.js';
import type { SendMessageBody } from '../fakes/fake-telegram.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

const git = (cwd: string, ...args: string[]) =>
  execa('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', ...args], { cwd, stdin: 'ignore' });

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  // Every run writes where it ran into where.txt, then answers: the same script for any number
  // of runs in any interleaving (a request carrying a tool result gets the answer).
  world.openai.setFallback((request: RecordedRequest) =>
    inputItemsOf(request).some((item) => item.type === 'function_call_output')
      ? { kind: 'message', text: 'Wrote where.txt.' }
      : { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'pwd > where.txt' } },
  );
});
afterAll(async () => world?.dispose());

/** Sends `text` as the owner; resolves with the first answer to it. */
async function answerTo(text: string, messageId: number): Promise<string> {
  world.telegram.pushUpdate(world.privateMessage(OWNER, text, messageId));
  return (await world.telegram.waitForSent((m) => replyTarget(m) === messageId, WAIT_MS)).text;
}

async function outcomeOf(runId: string): Promise<string> {
  return (
    await world.telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started'),
      WAIT_MS,
    )
  ).text;
}

describe('worktree per run', () => {
  it('refuses a repository with no commit yet, and a directory that is not a git checkout, with worktree_refused', async () => {
    expect(await answerTo('/codex worktree do it', 10)).toMatch(
      /has no commit yet \(its HEAD is unborn\).*Commit once, or run without the worktree option\./,
    );
    const plain = join(world.root, 'plain');
    await mkdir(plain, { recursive: true });
    expect(await answerTo(`/codex worktree in:${plain} do it`, 11)).toMatch(
      /is not in a git checkout, so a run there cannot get its own worktree/,
    );
    // Nothing was made for either.
    await expect(readdir(join(world.batonHome, 'worktrees', 'plain'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('runs two concurrent /codex worktree tasks on one repository, each in its own worktree on its own branch; the checkout is untouched', async () => {
    const { repo, telegram } = world;
    await readFile(join(repo, 'README.txt')).catch(async () => {
      await execa('sh', ['-c', 'printf hello > README.txt'], { cwd: repo });
      await git(repo, 'add', 'README.txt');
      await git(repo, 'commit', '-q', '-m', 'first');
    });
    const head = (await git(repo, 'rev-parse', 'HEAD')).stdout.trim();

    telegram.pushUpdate(world.privateMessage(OWNER, '/codex worktree first task', 20));
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex worktree second task', 21));
    const started = await Promise.all(
      [20, 21].map((id) => telegram.waitForSent((m) => replyTarget(m) === id, WAIT_MS)),
    );
    const ids = started.map((m) => {
      expect(m.text).toMatch(/\] started · codex · \S+ · branch baton\/hr_[0-9a-f]{12}$/);
      return runIdOf(m.text);
    });
    const outcomes = await Promise.all(ids.map(outcomeOf));
    for (const [i, runId] of ids.entries()) {
      const worktree = join(world.batonHome, 'worktrees', 'repo', runId);
      expect(outcomes[i]).toMatch(new RegExp(`^\\[run ${runId}\\] completed · codex · ${worktree} · `));
      expect(outcomes[i]).toContain(`Branch: baton/${runId} (1 new file)`);
      expect((await readFile(join(worktree, 'where.txt'), 'utf8')).trim()).toBe(worktree);
      expect((await git(repo, 'rev-parse', `refs/heads/baton/${runId}`)).stdout.trim()).toBe(head);
    }
    // The checkout itself: same commit, same branch, no new file, nothing changed.
    expect((await git(repo, 'rev-parse', 'HEAD')).stdout.trim()).toBe(head);
    expect((await git(repo, 'status', '--porcelain')).stdout).toBe('');
    await expect(stat(join(repo, 'where.txt'))).rejects.toMatchObject({ code: 'ENOENT' });

    // /runs ID shows the branch; a reply resumes in the same worktree.
    expect(await answerTo(`/runs ${ids[0]}`, 22)).toContain(
      `branch: baton/${ids[0]} (worktree ${join(world.batonHome, 'worktrees', 'repo', ids[0]!)}, from ${repo})`,
    );
    const firstOutcome = telegram.sent.find((m) => m.text.startsWith(`[run ${ids[0]}] completed`))!;
    telegram.pushUpdate(world.privateMessage(OWNER, 'and once more', 23, firstOutcome));
    const resumed = await telegram.waitForSent((m) => replyTarget(m) === 23, WAIT_MS);
    expect(resumed.text).toMatch(
      new RegExp(
        `started · codex · ${join(world.batonHome, 'worktrees', 'repo', ids[0]!)} · branch baton/${ids[0]} · resuming ${ids[0]}$`,
      ),
    );
    expect(await outcomeOf(runIdOf(resumed.text))).toContain(`Branch: baton/${ids[0]} (1 new file)`);

    // baton worktrees lists both (the resumed one once), with their state.
    const listed = await execa(process.execPath, [CLI, 'worktrees'], {
      env: world.env,
      extendEnv: false,
      reject: false,
    });
    if (world.env['DATABASE_URL']) {
      expect(listed.exitCode, listed.stderr).toBe(0);
      const lines = listed.stdout.split('\n').filter(Boolean);
      expect(lines).toHaveLength(2);
      // Listed under its newest run (the resume, for the first): that run's status says whether it is in use.
      for (const runId of ids)
        expect(listed.stdout).toMatch(
          new RegExp(
            `hr_[0-9a-f]{12} · baton/${runId} · \\S+/${runId} · from ${repo} · completed, uncommitted changes, 0 unmerged commits`,
          ),
        );
    }
  });

  it('a reply to a run whose worktree was deleted says so and offers a fresh worktree from its branch; it never resumes in an empty or non-git directory', async () => {
    const { repo, telegram } = world;
    await readFile(join(repo, 'README.txt')).catch(async () => {
      await execa('sh', ['-c', 'printf hello > README.txt'], { cwd: repo });
      await git(repo, 'add', 'README.txt');
      await git(repo, 'commit', '-q', '-m', 'first');
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex worktree third task', 30));
    const runId = runIdOf((await telegram.waitForSent((m) => replyTarget(m) === 30, WAIT_MS)).text);
    expect(await outcomeOf(runId)).toContain('completed');
    const worktree = join(world.batonHome, 'worktrees', 'repo', runId);
    await git(worktree, 'add', 'where.txt');
    await git(worktree, 'commit', '-q', '-m', "the run's work");
    await rm(worktree, { recursive: true, force: true });
    const outcome = telegram.sent.find((m) => m.text.startsWith(`[run ${runId}] completed`))!;
    const before = world.openai.requests.length;

    telegram.pushUpdate(world.privateMessage(OWNER, 'continue', 31, outcome));
    const gone = await telegram.waitForSent((m) => replyTarget(m) === 31, WAIT_MS);
    expect(gone.text).toBe(
      `[run ${runId}]'s worktree ${worktree} is gone, so it cannot continue there. Its branch baton/${runId} is still in ${repo}: ` +
        `press Restore worktree (or run \`baton worktrees restore ${runId}\` on the machine) to check it out again` +
        ' in a fresh worktree at the same place, then reply again. Changes that were not committed to the branch are lost.',
    );
    expect(buttonsOf(gone)).toEqual({ 'Restore worktree': `restore_worktree:${runId}` });
    // An empty directory in its place is not the worktree either.
    await mkdir(worktree, { recursive: true });
    telegram.pushUpdate(world.privateMessage(OWNER, 'continue', 32, outcome));
    expect((await telegram.waitForSent((m) => replyTarget(m) === 32, WAIT_MS)).text).toMatch(
      /is gone, so it cannot continue there/,
    );
    expect(world.openai.requests.length).toBe(before);

    expect(await press(gone, 'Restore worktree')).toBe(
      `Restored ${worktree} on branch baton/${runId}. Reply to the run's message to continue.`,
    );
    expect((await git(worktree, 'rev-parse', '--show-toplevel')).stdout.trim()).toBe(worktree);
    expect((await git(worktree, 'log', '-1', '--format=%s')).stdout.trim()).toBe("the run's work");
    expect(await press(gone, 'Restore worktree')).toBe(
      `${worktree} is already there, on branch baton/${runId}. Reply to the run's message to continue.`,
    );
    if (world.env['DATABASE_URL']) {
      // The same from the terminal (with embedded PGlite the service holds the database).
      const restored = await execa(process.execPath, [CLI, 'worktrees', 'restore', runId], {
        env: world.env,
        extendEnv: false,
        reject: false,
      });
      expect([restored.exitCode, restored.stdout.trim()]).toEqual([
        0,
        `${worktree} is already there, on branch baton/${runId}. Reply to the run's message to continue.`,
      ]);
    }

    telegram.pushUpdate(world.privateMessage(OWNER, 'continue', 33, outcome));
    const resumed = await telegram.waitForSent((m) => replyTarget(m) === 33, WAIT_MS);
    expect(resumed.text).toMatch(
      new RegExp(`started · codex · ${worktree} · branch baton/${runId} · resuming ${runId}$`),
    );
    expect(await outcomeOf(runIdOf(resumed.text))).toContain('completed');
  });
});

function buttonsOf(body: SendMessageBody): Record<string, string> {
  const rows =
    (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
      ?.inline_keyboard ?? [];
  return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
}

/** Presses `label` under `body` as the owner; resolves with the answer the presser saw. */
async function press(body: SendMessageBody, label: string): Promise<string | undefined> {
  const callbackData = buttonsOf(body)[label]!;
  const message = world.telegram.sentMessages[world.telegram.sent.indexOf(body)]!;
  const queryId = `cbq-${world.telegram.pressButton({ from: { id: OWNER }, message, callbackData })}-${OWNER}`;
  const deadline = Date.now() + WAIT_MS;
  while (!world.telegram.callbackAnswers.has(queryId)) {
    if (Date.now() > deadline) throw new Error(`the press ${queryId} was never answered`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return world.telegram.callbackAnswers.get(queryId)!.text;
}
