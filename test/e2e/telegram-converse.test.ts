/**
 * Plain messages as a conversation through `baton start` on the fake Bot API, with the real
 * claude CLI (the pinned version) against the fake Anthropic Messages API: the owner's plain
 * message starts a run with the default vendor, the next one continues its session, `/new`
 * starts afresh; a guest's and a stranger's plain messages launch nothing.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall, messagesOf, textsOf } from '../fakes/fake-anthropic.js';
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
});
