/**
 * Plain messages as a conversation through `baton start` on the fake Bot API, with the real
 * claude CLI (the pinned version) against the fake Anthropic Messages API: the owner's plain
 * message starts a run with the default vendor, the next one continues its session, `/new`
 * starts afresh; a guest's and a stranger's plain messages launch nothing.
 */
import { writeFile } from 'node:fs/promises';
import type { Update } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall, messagesOf, textsOf, type RecordedAnthropicRequest } from '../fakes/fake-anthropic.js';
import { inputItemsOf } from '../fakes/fake-openai.js';
import type { SendMessageBody } from '../fakes/fake-telegram.js';
import {
  GUEST,
  OWNER,
  STRANGER,
  WAIT_MS,
  replyTarget,
  runIdOf,
  startTelegramE2E,
  type TelegramE2E,
} from '../support/telegram-e2e.js';

let world: TelegramE2E;
let nextGroupUpdate = 800_000;

/** The user texts of a model call. */
const textOf = (request: RecordedAnthropicRequest): string => messagesOf(request).flatMap(textsOf).join('\n');

/** A message in the group GROUP from `userId`, optionally replying to a message the bot sent there. */
function groupMessage(userId: number, text: string, messageId: number, replyTo?: SendMessageBody): Update {
  const { telegram } = world;
  const replied = replyTo ? telegram.sentMessages[telegram.sent.indexOf(replyTo)] : undefined;
  nextGroupUpdate = Math.max(nextGroupUpdate, telegram.lastUpdateId() + 1);
  return {
    update_id: nextGroupUpdate++,
    message: {
      message_id: messageId,
      date: Math.floor(Date.now() / 1000),
      chat: { id: GROUP, type: 'supergroup', title: 'team' },
      from: { id: userId, is_bot: false, first_name: `user${userId}` },
      text,
      ...(replied ? { reply_to_message: replied } : {}),
      ...(text.startsWith('/')
        ? { entities: [{ type: 'bot_command' as const, offset: 0, length: text.split(' ')[0]!.length }] }
        : {}),
    },
  } as Update;
}

const GROUP = -100_777;

beforeAll(async () => {
  world = await startTelegramE2E({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: 'default_vendor = "claude"',
  });
});
afterAll(async () => world?.dispose());

describe('Telegram plain messages converse', () => {
  it('starts a claude run, continues its session on the next message, and starts afresh after /new', async () => {
    const { telegram, anthropic, repo } = world;
    anthropic.enqueue({ kind: 'message', text: 'Noted: the colour is teal.' });
    telegram.pushUpdate(world.privateMessage(OWNER, 'remember the colour teal', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toBe(`[run ${runIdOf(started.text)}] started · claude · ${repo}`);
    const firstId = runIdOf(started.text);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${firstId}] completed`), WAIT_MS);

    anthropic.enqueue({ kind: 'message', text: 'It was teal.' });
    const before = anthropic.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, 'which colour?', 11));
    const resumed = await telegram.waitForSent((m) => replyTarget(m) === 11 && m.text.includes('] started'), WAIT_MS);
    expect(resumed.text).toMatch(new RegExp(` · resuming ${firstId}$`));
    const secondId = runIdOf(resumed.text);
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${secondId}] completed`), WAIT_MS);
    expect(done.text).toContain('It was teal.');
    const texts = messagesOf(anthropic.requests.slice(before).filter(isMessagesCall).at(-1)!)
      .flatMap(textsOf)
      .join('\n');
    expect(texts).toContain('remember the colour teal');

    telegram.pushUpdate(world.privateMessage(OWNER, '/new', 12));
    const fresh = await telegram.waitForSent((m) => replyTarget(m) === 12, WAIT_MS);
    expect(fresh.text).toMatch(/^New conversation/);

    anthropic.enqueue({ kind: 'message', text: 'Which colour do you mean?' });
    const beforeFresh = anthropic.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, 'and now?', 13));
    const third = await telegram.waitForSent((m) => replyTarget(m) === 13 && m.text.includes('] started'), WAIT_MS);
    expect(third.text).toBe(`[run ${runIdOf(third.text)}] started · claude · ${repo}`);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(third.text)}] completed`), WAIT_MS);
    const freshTexts = messagesOf(anthropic.requests.slice(beforeFresh).filter(isMessagesCall).at(-1)!)
      .flatMap(textsOf)
      .join('\n');
    expect(freshTexts).not.toContain('teal');
  });

  it("launches nothing for a guest's or a stranger's plain message", async () => {
    const { telegram } = world;
    const requests = world.anthropic.requests.length;
    telegram.pushUpdate(world.privateMessage(STRANGER, 'run something for me', 21));
    telegram.pushUpdate(world.privateMessage(GUEST, 'run something for me', 20));
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 20, WAIT_MS);
    expect(answer.text).toMatch(/^Send \/help for the commands/);
    expect(telegram.sent.filter((m) => replyTarget(m) === 21)).toEqual([]);
    expect(world.anthropic.requests.length).toBe(requests);
  });

  it("adds the owner's reply to a running claude run's status message to its running turn", async () => {
    const { telegram, anthropic } = world;
    let release!: () => void;
    anthropic.enqueue(
      { kind: 'message', text: 'Working on the poem.', gate: new Promise<void>((r) => (release = r)) },
      { kind: 'message', text: 'The poem, now with blue.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude write a poem', 40));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 40 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await anthropic.waitForRequest((r) => isMessagesCall(r) && textOf(r).includes('write a poem'), WAIT_MS);

    telegram.pushUpdate(world.privateMessage(OWNER, 'also mention blue', 41, started));
    const added = await telegram.waitForSent((m) => replyTarget(m) === 41, WAIT_MS);
    expect(added.text).toBe(`↪ added to [run ${runId}]`);
    release();
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).toContain('The poem, now with blue.');
    const steered = await anthropic.waitForRequest(
      (r) => isMessagesCall(r) && textOf(r).includes('also mention blue'),
      WAIT_MS,
    );
    expect(textOf(steered)).toContain('write a poem');
    // One run: the message went into its session, it started no run of its own.
    expect(telegram.sent.filter((m) => replyTarget(m) === 41)).toHaveLength(1);
  });

  it("adds the owner's mention in a group to its one active run; a guest's or a stranger's reply adds nothing", async () => {
    const { telegram, anthropic } = world;
    let release!: () => void;
    anthropic.enqueue(
      { kind: 'message', text: 'Looking at it.', gate: new Promise<void>((r) => (release = r)) },
      { kind: 'message', text: 'Checked the tests as well.' },
    );
    telegram.pushUpdate(groupMessage(OWNER, '/claude look at the build', 50));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 50 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await anthropic.waitForRequest((r) => isMessagesCall(r) && textOf(r).includes('look at the build'), WAIT_MS);

    telegram.pushUpdate(groupMessage(STRANGER, 'stranger words: delete everything', 51, started));
    telegram.pushUpdate(groupMessage(GUEST, 'guest words: delete everything', 52, started));
    const refused = await telegram.waitForSent((m) => replyTarget(m) === 52, WAIT_MS);
    expect(refused.text).toBe('Coding runs are available to the owner only.');
    telegram.pushUpdate(groupMessage(OWNER, '@baton_test_bot check the tests too', 53));
    const added = await telegram.waitForSent((m) => replyTarget(m) === 53, WAIT_MS);
    expect(added.text).toBe(`↪ added to [run ${runId}]`);
    release();
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).toContain('Checked the tests as well.');
    const calls = anthropic.requests.filter((r) => isMessagesCall(r) && textOf(r).includes('look at the build'));
    expect(calls.some((r) => textOf(r).includes('check the tests too'))).toBe(true);
    expect(calls.some((r) => /delete everything/.test(textOf(r)))).toBe(false);
    expect(telegram.sent.filter((m) => replyTarget(m) === 51)).toEqual([]);
  });

  it('/cancel first asks claude to stop: it stops by itself, and the outcome says so with its last message', async () => {
    const { telegram, anthropic } = world;
    let release!: () => void;
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'printf x > looked.txt' }, text: 'Looking first.' },
      { kind: 'message', text: 'Never sent.', gate: new Promise<void>((r) => (release = r)) },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude mode:acceptEdits take a long look', 60));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 60 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    // The second model call, after the tool's result, is held open: the agent is at work.
    await anthropic.waitForRequest(
      (r) =>
        isMessagesCall(r) && textOf(r).includes('take a long look') && JSON.stringify(r.body).includes('tool_result'),
      WAIT_MS,
    );
    telegram.pushUpdate(world.privateMessage(OWNER, `/cancel ${runId}`, 61));
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    release();
    expect(outcome.text).toContain('Asked to stop, the agent stopped by itself.');
    expect(outcome.text).toContain('Last agent message:\nLooking first.');
    const events = await world.eventsOf(runId);
    expect(events.some((e) => e.type === 'control_response')).toBe(true);
  });

  it("adds the owner's reply to a running codex run (app-server) to its turn with turn/steer", async () => {
    const { telegram, openai, dir } = world;
    const marker = `${dir}/steer-release`;
    // The tool call keeps the turn busy until the test lets it go: the steer meets a running turn.
    openai.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: `while [ ! -e ${marker} ]; do sleep 0.1; done; echo released`, yield_time_ms: 30_000 },
      },
      { kind: 'message', text: 'Done, and noted.' },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex list the files', 70));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 70 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await openai.waitForRequest((r) => JSON.stringify(r.body).includes('list the files'), WAIT_MS);

    telegram.pushUpdate(world.privateMessage(OWNER, 'also count them', 71, started));
    const added = await telegram.waitForSent((m) => replyTarget(m) === 71, WAIT_MS);
    expect(added.text).toBe(`↪ added to [run ${runId}]`);
    await writeFile(marker, '');
    const done = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.text).toContain('Done, and noted.');
    // The steer went into the same turn's next model call, beside the tool's result.
    const steered = openai.requests.find((r) => JSON.stringify(inputItemsOf(r)).includes('also count them'));
    expect(steered).toBeDefined();
    expect(JSON.stringify(inputItemsOf(steered!))).toContain('function_call_output');
    expect(telegram.sent.filter((m) => replyTarget(m) === 71)).toHaveLength(1);
  });
});
