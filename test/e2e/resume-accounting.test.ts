/**
 * Resumes are charged their own tokens, and a reply carries options as a command does: the
 * service with the real grammY client against the fake Bot API, the real codex CLI against the
 * fake Responses API. The pinned codex reports a resumed session's totals (measured: a
 * 1,500-token parent and a 3,000-token resume report 4,500).
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FakeUsage } from '../fakes/fake-openai.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;
const USAGE: FakeUsage = { input_tokens: 1000, cached_input_tokens: 0, output_tokens: 500, reasoning_output_tokens: 0 };

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir')] });
});
afterAll(async () => world?.dispose());

describe('resume accounting', () => {
  it('charges a resume its own tokens, under a tokens: cap given in the reply; a mistyped option in a reply is refused', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'First.', usage: USAGE });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex tokens:2k remember pelican', 70));
    const first = await telegram.waitForSent((m) => replyTarget(m) === 70 && / completed · /.test(m.text), WAIT_MS);
    expect(first.text.split('\n')[0]).toContain('1,500 tokens (1,000 in, 500 out)');

    // Two model requests of 1,500 tokens: 3,000 of its own, 4,500 for the session.
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'true' }, usage: USAGE },
      { kind: 'message', text: 'Second.', usage: USAGE },
    );
    telegram.pushUpdate(world.privateMessage(OWNER, 'tokens:4k continue', 71, first));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 71 && m.text.includes('] started'), WAIT_MS);
    const second = runIdOf(started.text);
    const secondDone = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${second}] `) && !m.text.includes('] started'),
      WAIT_MS,
    );
    expect(secondDone.text.split('\n')[0]).toMatch(/ completed · .*3,000 tokens \(2,000 in, 1,000 out\)/);
    // The reply's options are not the task: the model got "continue".
    expect(JSON.stringify(openai.requests.at(-1)?.body)).not.toContain('tokens:4k');

    // A resume of a resume: the session stands at 6,000, this run used 1,500 (under the parent's 4k cap it inherits).
    openai.enqueue({ kind: 'message', text: 'Third.', usage: USAGE });
    telegram.pushUpdate(world.privateMessage(OWNER, 'go on', 72, secondDone));
    const third = runIdOf(
      (await telegram.waitForSent((m) => replyTarget(m) === 72 && m.text.includes('] started'), WAIT_MS)).text,
    );
    const thirdDone = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${third}] `) && !m.text.includes('] started'),
      WAIT_MS,
    );
    expect(thirdDone.text.split('\n')[0]).toMatch(/ completed · .*1,500 tokens \(1,000 in, 500 out\)/);

    const before = openai.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, 'timout:5 go on', 73, thirdDone));
    const refusal = await telegram.waitForSent((m) => replyTarget(m) === 73, WAIT_MS);
    expect(refusal.text).toMatch(/^Unknown option timout:\. Did you mean "timeout:"\?/);
    expect(openai.requests.length).toBe(before);
  });
});
