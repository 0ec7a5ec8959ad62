/**
 * Tool approvals and buttons on Telegram (issue #14), end to end: `baton start` with the fake Bot
 * API, the real claude CLI (the pinned version) against the fake Anthropic server, baton's
 * per-run permission-prompt server in between. Each tool call claude asks about comes to the chat
 * with Allow / Allow for this run / Deny; only the owner's press counts.
 */
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Message } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { SendMessageBody } from '../fakes/fake-telegram.js';
import {
  GUEST,
  OWNER,
  WAIT_MS,
  replyTarget,
  runIdOf,
  startTelegramE2E,
  type TelegramE2E,
} from '../support/telegram-e2e.js';

/** The buttons under a sent message, as `label → callback_data`. */
function buttonsOf(body: SendMessageBody): Record<string, string> {
  const rows =
    (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
      ?.inline_keyboard ?? [];
  return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
}

function sentMessageOf(world: TelegramE2E, body: SendMessageBody): Message {
  return world.telegram.sentMessages[world.telegram.sent.indexOf(body)]!;
}

/** Presses `label` under `body` as `userId`; resolves with the answer the presser saw. */
async function press(
  world: TelegramE2E,
  body: SendMessageBody,
  label: string,
  userId: number,
): Promise<string | undefined> {
  const callbackData = buttonsOf(body)[label];
  if (!callbackData) throw new Error(`no button ${label} under ${JSON.stringify(body.text)}`);
  const updateId = world.telegram.pressButton({
    from: { id: userId },
    message: sentMessageOf(world, body),
    callbackData,
  });
  const queryId = `cbq-${updateId}-${userId}`;
  const deadline = Date.now() + WAIT_MS;
  while (!world.telegram.callbackAnswers.has(queryId)) {
    if (Date.now() > deadline) throw new Error(`the press ${queryId} was never answered`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return world.telegram.callbackAnswers.get(queryId)!.text;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

describe('tool approvals from Telegram (owner answers)', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    // A run waiting for an approval is silent: after a minute it gets the watchdog advisory.
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: 'inactivity_minutes = 1',
    });
  });
  afterAll(async () => world?.dispose());

  it('shows the command with Allow / Allow for this run / Deny; a guest press changes nothing; Allow runs it', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue(
      {
        kind: 'tool_use',
        name: 'Bash',
        input: { command: 'printf approved > approved.txt', description: 'write a file' },
      },
      { kind: 'message', text: 'Wrote approved.txt.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:default write the file', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    expect(Object.keys(buttonsOf(started))).toEqual(['Stop']);
    const ask = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    expect(ask.text.split('\n')[1]).toBe('$ printf approved > approved.txt');
    expect(Object.keys(buttonsOf(ask))).toEqual(['Allow', 'Allow for this run', 'Deny']);

    expect(await press(world, ask, 'Allow', GUEST)).toBe('Only the owner can use these buttons.');
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 11));
    const waiting = await telegram.waitForSent((m) => replyTarget(m) === 11, WAIT_MS);
    expect(waiting.text).toMatch(/#\d+ · Bash: printf approved > approved\.txt · asked \S+ · waiting for the owner/);
    expect(await exists(join(repo, 'approved.txt'))).toBe(false);

    expect(await press(world, ask, 'Allow', OWNER)).toBe('Allowed.');
    const done = await telegram.waitForSent(
      (m) =>
        /^\[run \S+\] (completed|failed|cancelled|interrupted|blocked)/.test(m.text) &&
        m.text.startsWith(`[run ${runId}]`),
      WAIT_MS,
    );
    expect(done.text.split('\n')[0]).toMatch(new RegExp(`^\\[run ${runId}\\] completed · claude`));
    expect(done.text).not.toContain('denied');
    expect(await readFile(join(repo, 'approved.txt'), 'utf8')).toBe('approved');

    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 12));
    const view = await telegram.waitForSent((m) => replyTarget(m) === 12, WAIT_MS);
    expect(view.text).toMatch(
      new RegExp(`Bash: printf approved > approved\\.txt · asked \\S+ · allow by telegram:${OWNER} at `),
    );
  });

  it('Deny: the call does not run and the outcome lists the denial', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch refused.txt' } },
      { kind: 'message', text: 'Created refused.txt.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve create refused.txt', 20));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 20 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const ask = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    expect(await press(world, ask, 'Deny', OWNER)).toBe('Denied.');
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text.split('\n')[0]).toMatch(/ · 1 tool call denied$/);
    expect(done.text).toContain(
      '- Bash: touch refused.txt\nThey were denied in the chat (Deny, or no answer in time); Allow lets such a call run next time.',
    );
    expect(await exists(join(repo, 'refused.txt'))).toBe(false);
    // A second press of the same message changes nothing.
    expect(await press(world, ask, 'Allow', OWNER)).toMatch(/^(Already decided: deny\.|That run has already ended\.)$/);
  });

  it('Allow for this run covers later calls of the same program without asking again', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch first.txt' } },
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch second.txt' } },
      { kind: 'message', text: 'Both created.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve create two files', 30));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 30 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const ask = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    const touchKind = 'every `touch …` command that names no other code to run and no path outside the project';
    expect(ask.text).toContain(`Allow for this run covers ${touchKind}.`);
    expect(await press(world, ask, 'Allow for this run', OWNER)).toBe(
      `Allowed, and ${touchKind} for the rest of this run.`,
    );
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).not.toContain('denied');
    expect(await exists(join(repo, 'first.txt'))).toBe(true);
    expect(await exists(join(repo, 'second.txt'))).toBe(true);
    expect(telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] claude asks`))).toHaveLength(1);
  });

  it("Allow for this run on `git tag` does not cover a git option that runs code, nor a Write to baton's own files", async () => {
    const { telegram, anthropic, repo } = world;
    const envFile = join(world.batonHome, '.env.approval-test');
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'git tag v-approved' } },
      { kind: 'tool_use', name: 'Bash', input: { command: 'git -c core.fsmonitor="touch pwned.txt" status' } },
      { kind: 'tool_use', name: 'Write', input: { file_path: join(repo, 'inside.txt'), content: 'in' } },
      { kind: 'tool_use', name: 'Write', input: { file_path: envFile, content: 'TELEGRAM_API_ROOT=http://evil' } },
      { kind: 'message', text: 'Done.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve tag and write', 35));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 35 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const asks = (): SendMessageBody[] => telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] claude asks`));
    const tag = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    expect(await press(world, tag, 'Allow for this run', OWNER)).toMatch(/^Allowed, and every `git tag …` command/);
    const fsmonitor = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`) && m.text.includes('core.fsmonitor'),
      WAIT_MS,
    );
    expect(fsmonitor.text).toContain('Allow for this run covers this exact command.');
    expect(await press(world, fsmonitor, 'Deny', OWNER)).toBe('Denied.');
    const inside = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] claude asks to use Write`),
      WAIT_MS,
    );
    expect(await press(world, inside, 'Allow for this run', OWNER)).toMatch(
      /^Allowed, and every Write inside the run's directory/,
    );
    const env = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] claude asks to use Write`) && m.text.includes('.env.approval-test'),
      WAIT_MS,
    );
    expect(env.text).toContain("⚠ baton's own files:");
    expect(Object.keys(buttonsOf(env))).toEqual(['Allow', 'Deny']);
    expect(await press(world, env, 'Deny', OWNER)).toBe('Denied.');
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(asks()).toHaveLength(4);
    expect(await exists(join(repo, 'pwned.txt'))).toBe(false);
    expect(await exists(envFile)).toBe(false);
  });

  it('Stop under the started message stops a run waiting for an approval; no process is left', async () => {
    const { telegram, anthropic } = world;
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch never.txt' } },
      { kind: 'message', text: 'unreached' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:default create never.txt', 40));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 40 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
    expect(await press(world, started, 'Stop', GUEST)).toBe('Only the owner can use these buttons.');
    expect(await press(world, started, 'Stop', OWNER)).toMatch(/^Stop(ped\.| requested)/);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 41));
    const view = await telegram.waitForSent((m) => replyTarget(m) === 41, WAIT_MS);
    expect(view.text).toMatch(/Bash: touch never\.txt · asked \S+ · run_gone by baton/);
    expect(await processesOfRun(runId)).toEqual([]);
  });
});

describe('buttons on Telegram', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: 'inactivity_minutes = 1',
    });
  });
  afterAll(async () => world?.dispose());

  it(
    'a watchdog advisory carries Keep waiting, +30 min (moves the deadline, once per card) and Stop',
    async () => {
      const { telegram, anthropic } = world;
      // Only the tool call is queued: the run is stopped before claude asks for another turn.
      anthropic.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'touch slow.txt' } });
      telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve timeout:30 create slow.txt', 60));
      const started = await telegram.waitForSent((m) => replyTarget(m) === 60 && m.text.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.text);
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`), WAIT_MS);
      const advisory = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${runId}] No output from claude for 1m 00s`),
        3 * WAIT_MS,
      );
      expect(Object.keys(buttonsOf(advisory))).toEqual(['Keep waiting', '+30 min', 'Stop']);
      expect(await press(world, advisory, '+30 min', GUEST)).toBe('Only the owner can use these buttons.');
      expect(await press(world, advisory, '+30 min', OWNER)).toBe('Wall clock now 60 minutes (at most 240).');
      // The card has decided: its other buttons act no more.
      expect(await press(world, advisory, 'Keep waiting', OWNER)).toBe(
        'Already pressed: Wall clock now 60 minutes (at most 240).',
      );
      telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 61));
      const view = await telegram.waitForSent((m) => replyTarget(m) === 61, WAIT_MS);
      expect(view.text).toContain('timeout: 60 min');
      expect(await press(world, started, 'Stop', OWNER)).toMatch(/^Stop(ped\.| requested)/);
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      expect(await processesOfRun(runId)).toEqual([]);
    },
    5 * WAIT_MS,
  );

  it('a failed run with a session carries Resume, which resumes it', async () => {
    const { telegram, anthropic } = world;
    anthropic.enqueue({ kind: 'http_error', status: 401 });
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude this will fail', 70));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 70 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    const failed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] failed`), WAIT_MS);
    expect(Object.keys(buttonsOf(failed))).toEqual(['Resume']);
    anthropic.enqueue({ kind: 'message', text: 'Picked it up again.' });
    expect(await press(world, failed, 'Resume', OWNER)).toMatch(/^Resuming as hr_[0-9a-f]{12}\.$/);
    const resumed = await telegram.waitForSent(
      (m) => m.text.includes(`] started · claude · `) && m.text.endsWith(`resuming ${runId}`),
      WAIT_MS,
    );
    const done = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runIdOf(resumed.text)}] completed`),
      WAIT_MS,
    );
    expect(done.text).toContain('Picked it up again.');
  });

  it(
    'pressed buttons give way to the decision; a double tap on Resume resumes once; no second run of a session that is still working',
    async () => {
      const { telegram, anthropic } = world;
      anthropic.enqueue({ kind: 'http_error', status: 401 });
      telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve this will fail too', 100));
      const started = await telegram.waitForSent(
        (m) => replyTarget(m) === 100 && m.text.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.text);
      const failed = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] failed`), WAIT_MS);
      // The resumed run asks for approval (its parent was launched with approve), so it stays running.
      anthropic.enqueue(
        { kind: 'tool_use', name: 'Bash', input: { command: 'touch resumed.txt' } },
        { kind: 'message', text: 'Resumed.' },
      );
      const first = await press(world, failed, 'Resume', OWNER);
      expect(first).toMatch(/^Resuming as hr_[0-9a-f]{12}\.$/);
      const childId = first!.slice('Resuming as '.length, -1);
      expect(await press(world, failed, 'Resume', OWNER)).toBe(`Already pressed: ${first}`);
      const failedId = sentMessageOf(world, failed).message_id;
      const edited = telegram.edits.find((e) => e.message_id === failedId);
      expect(edited?.text).toMatch(new RegExp(`^\\[run ${runId}\\] failed[\\s\\S]*\\n\\n✓ Resuming as ${childId}\\.$`));
      expect(edited?.['reply_markup']).toBeUndefined();
      const ask = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${childId}] claude asks to use Bash`),
        WAIT_MS,
      );
      // A reply to the parent while its resume still works in the session goes to that resume's
      // running turn: no second run of the session.
      telegram.pushUpdate(world.privateMessage(OWNER, 'and also this', 101, failed));
      const added = await telegram.waitForSent((m) => replyTarget(m) === 101, WAIT_MS);
      expect(added.text).toBe(`↪ added to [run ${childId}]`);
      expect(await press(world, ask, 'Deny', OWNER)).toBe('Denied.');
      const askId = sentMessageOf(world, ask).message_id;
      const decided = telegram.edits.find((e) => e.message_id === askId);
      expect(decided?.text).toMatch(/\n\n✓ Denied\.$/);
      expect(decided?.['reply_markup']).toBeUndefined();
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${childId}] completed`), WAIT_MS);
      expect(telegram.sent.filter((m) => m.text.includes(`resuming ${runId}`))).toHaveLength(1);
    },
    4 * WAIT_MS,
  );

  it(
    'a restart while an approval waits: the run is interrupted, its approval closed as run_gone, and Resume offered',
    async () => {
      const { telegram, anthropic } = world;
      anthropic.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'touch crash.txt' } });
      telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve create crash.txt', 90));
      const started = await telegram.waitForSent((m) => replyTarget(m) === 90 && m.text.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.text);
      const ask = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${runId}] claude asks to use Bash`),
        WAIT_MS,
      );
      await world.crashAndRestart();
      // The ask may have reached Telegram before the killed service recorded it: the outbox then
      // sends it again once its 60 s lease ends, and the run's outcome follows it in order.
      const interrupted = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${runId}] interrupted`),
        3 * WAIT_MS,
      );
      expect(Object.keys(buttonsOf(interrupted))).toEqual(['Resume']);
      expect(await press(world, ask, 'Allow', OWNER)).toMatch(
        /^(Already decided: run_gone\.|That run has already ended\.)$/,
      );
      telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 91));
      const view = await telegram.waitForSent((m) => replyTarget(m) === 91, WAIT_MS);
      expect(view.text).toMatch(/Bash: touch crash\.txt · asked \S+ · run_gone by baton/);
      expect(await processesOfRun(runId)).toEqual([]);
    },
    5 * WAIT_MS,
  );

  it('/runs dead letters carry Redeliver, which resends a dead letter once', async () => {
    const { telegram } = world;
    // 403: the bot was blocked; a refusal that will not change, so the reply is dead-lettered at once.
    telegram.failNext('sendMessage', {
      status: 403,
      body: { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' },
      when: (b) => String(b['text']).startsWith('Your telegram user id'),
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/whoami', 80));
    telegram.pushUpdate(world.privateMessage(OWNER, '/runs', 81));
    const list = await telegram.waitForSent((m) => replyTarget(m) === 81, WAIT_MS);
    const label = Object.keys(buttonsOf(list)).find((l) => l.startsWith('Redeliver #'));
    expect(label).toBeDefined();
    expect(list.text).toContain(`${label!.slice('Redeliver '.length)} · no run · reply · 1 attempts`);
    expect(await press(world, list, label!, OWNER)).toBe(`${label!.slice('Redeliver '.length)} sent again.`);
    await telegram.waitForSent((m) => replyTarget(m) === 80 && m.text.startsWith('Your telegram user id'), WAIT_MS);
    expect(await press(world, list, label!, OWNER)).toBe(
      `${label!.slice('Redeliver '.length)} is not a dead letter (see /runs for the list).`,
    );
    expect(telegram.sent.filter((m) => replyTarget(m) === 80)).toHaveLength(1);
  });
});

describe('tool approvals from Telegram (no answer)', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    // 0.02 minutes = 1.2 s: the wait ends long before any test timeout, whatever the load.
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: 'approval_timeout_minutes = 0.02',
    });
  });
  afterAll(async () => world?.dispose());

  it('denies the call after approval_timeout_minutes and says so in the chat', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch late.txt' } },
      { kind: 'message', text: 'Created late.txt.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude approve create late.txt', 50));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 50 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await telegram.waitForSent((m) => m.text === `[run ${runId}] No answer within 1s: Bash denied.`, WAIT_MS);
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).toContain('- Bash: touch late.txt');
    expect(await exists(join(repo, 'late.txt'))).toBe(false);
  });
});

/** Processes whose environment names this run (baton gives every run's CLI `BATON_RUN_ID`). */
async function processesOfRun(runId: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').some((v) => v === `BATON_RUN_ID=${runId}` || v === `BATON_APPROVAL_RUN_ID=${runId}`))
      found.push(Number(entry));
  }
  return found;
}
