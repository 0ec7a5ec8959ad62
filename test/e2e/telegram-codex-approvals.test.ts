/**
 * Tool approvals for codex on Telegram, end to end: `baton start` with the fake Bot API, the real
 * codex CLI (the pinned version) through `codex app-server` against the fake Responses API. A
 * command codex asks about (`item/commandExecution/requestApproval`) comes to the chat as the same
 * card claude's do — Allow / Allow for this run / Deny — and only the owner's press counts.
 */
import { access } from 'node:fs/promises';
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

function buttonsOf(body: SendMessageBody): Record<string, string> {
  const rows =
    (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
      ?.inline_keyboard ?? [];
  return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
}

/** Presses `label` under `body` as `userId`; resolves with the answer the presser saw. */
async function press(world: TelegramE2E, body: SendMessageBody, label: string, userId: number): Promise<string> {
  const callbackData = buttonsOf(body)[label];
  if (!callbackData) throw new Error(`no button ${label} under ${JSON.stringify(body.text)}`);
  const message: Message = world.telegram.sentMessages[world.telegram.sent.indexOf(body)]!;
  const updateId = world.telegram.pressButton({ from: { id: userId }, message, callbackData });
  const queryId = `cbq-${updateId}-${userId}`;
  const deadline = Date.now() + WAIT_MS;
  while (!world.telegram.callbackAnswers.has(queryId)) {
    if (Date.now() > deadline) throw new Error(`the press ${queryId} was never answered`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return world.telegram.callbackAnswers.get(queryId)!.text ?? '';
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

/** Starts `/codex approve TASK` as message `messageId`; resolves with its run id. */
async function launch(world: TelegramE2E, task: string, messageId: number): Promise<string> {
  world.telegram.pushUpdate(world.privateMessage(OWNER, `/codex approve ${task}`, messageId));
  const started = await world.telegram.waitForSent(
    (m) => replyTarget(m) === messageId && m.text.includes('] started'),
    WAIT_MS,
  );
  return runIdOf(started.text);
}

const askOf = (world: TelegramE2E, runId: string): Promise<SendMessageBody> =>
  world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] codex asks to use Bash`), WAIT_MS);

const outcomeOf = (world: TelegramE2E, runId: string): Promise<SendMessageBody> =>
  world.telegram.waitForSent(
    (m) => /^\[run \S+\] (completed|failed|cancelled|interrupted)/.test(m.text) && m.text.startsWith(`[run ${runId}]`),
    WAIT_MS,
  );

describe('codex tool approvals from Telegram', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: 'inactivity_minutes = 1',
    });
  });
  afterAll(async () => world?.dispose());

  it('shows the command with Allow / Allow for this run / Deny; a guest press changes nothing; Allow runs it; /runs shows the decision', async () => {
    const { telegram, openai, repo } = world;
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch approved.txt' } },
      { kind: 'message', text: 'Made approved.txt.' },
    );
    const runId = await launch(world, 'make approved.txt', 10);
    const ask = await askOf(world, runId);
    expect(ask.text.split('\n')[1]).toBe('$ touch approved.txt');
    expect(Object.keys(buttonsOf(ask))).toEqual(['Allow', 'Allow for this run', 'Deny']);
    expect(await press(world, ask, 'Allow', GUEST)).toBe('Only the owner can use these buttons.');
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 11));
    const waiting = await telegram.waitForSent((m) => replyTarget(m) === 11, WAIT_MS);
    expect(waiting.text).toMatch(/#\d+ · Bash: touch approved\.txt · asked \S+ · waiting for the owner/);
    expect(await exists(join(repo, 'approved.txt'))).toBe(false);

    expect(await press(world, ask, 'Allow', OWNER)).toBe('Allowed.');
    const done = await outcomeOf(world, runId);
    expect(done.text.split('\n')[0]).toMatch(new RegExp(`^\\[run ${runId}\\] completed · codex`));
    expect(done.text).toContain('Made approved.txt.');
    expect(await exists(join(repo, 'approved.txt'))).toBe(true);
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 12));
    const view = await telegram.waitForSent((m) => replyTarget(m) === 12, WAIT_MS);
    expect(view.text).toMatch(new RegExp(`Bash: touch approved\\.txt · asked \\S+ · allow by telegram:${OWNER} at `));
  });

  it('Deny: the command does not run, codex goes on, and the outcome lists the denial', async () => {
    const { openai, repo } = world;
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch refused.txt' } },
      { kind: 'message', text: 'I was not allowed.' },
    );
    const runId = await launch(world, 'make refused.txt', 20);
    const ask = await askOf(world, runId);
    expect(await press(world, ask, 'Deny', OWNER)).toBe('Denied.');
    const done = await outcomeOf(world, runId);
    expect(done.text.split('\n')[0]).toMatch(
      new RegExp(`^\\[run ${runId}\\] completed · codex.* · 1 tool call denied$`),
    );
    expect(done.text).toContain('- Bash: touch refused.txt');
    expect(await exists(join(repo, 'refused.txt'))).toBe(false);
    expect(await press(world, ask, 'Allow', OWNER)).toMatch(/^(Already decided: deny\.|That run has already ended\.)$/);
  });

  it('Allow for this run covers a later `touch` without asking, and not a command that runs elsewhere', async () => {
    const { telegram, openai, repo } = world;
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch first.txt' } },
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch second.txt' } },
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch third.txt', workdir: '/tmp' } },
      { kind: 'message', text: 'Done.' },
    );
    const runId = await launch(world, 'make files', 30);
    const ask = await askOf(world, runId);
    const touchKind = 'every `touch …` command that names no other code to run and no path outside the project';
    expect(ask.text).toContain(`Allow for this run covers ${touchKind}.`);
    expect(await press(world, ask, 'Allow for this run', OWNER)).toBe(
      `Allowed, and ${touchKind} for the rest of this run.`,
    );
    // The command in /tmp is asked about, shown with where it runs.
    const elsewhere = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runId}] codex asks to use Bash`) && m.text.includes('third.txt'),
      WAIT_MS,
    );
    expect(elsewhere.text.split('\n')[1]).toBe('$ cd /tmp && touch third.txt');
    expect(await press(world, elsewhere, 'Deny', OWNER)).toBe('Denied.');
    const done = await outcomeOf(world, runId);
    expect(done.text.split('\n')[0]).toMatch(/ · 1 tool call denied$/);
    expect(await exists(join(repo, 'first.txt'))).toBe(true);
    expect(await exists(join(repo, 'second.txt'))).toBe(true);
    expect(await exists('/tmp/third.txt')).toBe(false);
    expect(telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] codex asks`))).toHaveLength(2);
  });
});

describe('codex tool approvals: no answer in time', () => {
  let world: TelegramE2E;
  beforeAll(async () => {
    // 0.05 minutes: 3 s.
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: 'approval_timeout_minutes = 0.05',
    });
  });
  afterAll(async () => world?.dispose());

  it('denies the command at the timeout, says so, and the run goes on', async () => {
    const { telegram, openai, repo } = world;
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'touch late.txt' } },
      { kind: 'message', text: 'Nobody answered.' },
    );
    const runId = await launch(world, 'make late.txt', 40);
    await askOf(world, runId);
    const done = await outcomeOf(world, runId);
    expect(done.text.split('\n')[0]).toMatch(/completed · codex.* · 1 tool call denied$/);
    expect(await exists(join(repo, 'late.txt'))).toBe(false);
    telegram.pushUpdate(world.privateMessage(OWNER, `/runs ${runId}`, 41));
    const view = await telegram.waitForSent((m) => replyTarget(m) === 41, WAIT_MS);
    expect(view.text).toMatch(/Bash: touch late\.txt · asked \S+ · timeout by baton/);
  });
});
