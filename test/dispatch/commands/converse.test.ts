/**
 * Plain messages as a conversation (`[chat] plain_messages`): the owner's plain message starts a
 * run, continues the conversation's session, or waits for its active run; `/new` starts afresh;
 * guests, strangers and unaddressed group messages are answered as before.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunId } from '../../../src/core/ids.js';
import { TEXT_IN_DM } from '../../../src/wording/dispatch.js';
import { NEW_SESSION_TEXT, steerDeferredText } from '../../../src/wording/converse.js';
import { waitFor } from '../../support/wait.js';
import { createHarness, inbound, type TestHarness } from '../../support/harness.js';
import { testEngine } from '../../support/database.js';

let h: TestHarness;
let commands: TestHarness;

/** The harness's config with `root` as the default directory, and `chat` as the `[chat]` table. */
const config =
  (chat: string) =>
  ({ root }: { root: string }): string =>
    `[harness]\napproved = true\nmax_active = 5\n[workspace]\nroots = [${JSON.stringify(root)}]\ndefault = ${JSON.stringify(root)}\n${chat}[channels.telegram]\nowner_user_id = "1"\nallowed_user_ids = ["2"]\n`;

beforeAll(async () => {
  h = await createHarness({ replaceConfig: config('') });
  commands = await createHarness({ replaceConfig: config('[chat]\nplain_messages = "commands"\n') });
}, 60_000);
afterAll(async () => {
  await h?.dispose();
  await commands?.dispose();
});

async function finished(runId: RunId) {
  await h.supervisor.idle();
  return (await h.store.runs.getRun(runId))!;
}

/** The texts sent in reply to `message` (by its id). */
function repliesTo(harness: TestHarness, messageId: string): string[] {
  return harness.channel.sent.filter((m) => m.replyToMessageId === messageId).map((m) => m.text);
}

describe(`plain messages converse (${testEngine})`, () => {
  it('starts a run with the default vendor, continues its session, and starts afresh after /new', async () => {
    const chat = '1';
    const first = await h.dispatcher.handle(inbound('1', 'success first', { chatId: chat }));
    if (first.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(first)}`);
    const firstRun = await finished(first.runId);
    expect(firstRun).toMatchObject({ vendor: 'codex', cwd: h.root, status: 'completed', parentRunId: null });

    const second = await h.dispatcher.handle(inbound('1', 'success second', { chatId: chat }));
    if (second.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(second)}`);
    expect(await finished(second.runId)).toMatchObject({ parentRunId: first.runId, status: 'completed' });

    const fresh = inbound('1', '/new', { chatId: chat });
    expect((await h.dispatcher.handle(fresh)).kind).toBe('answered');
    expect(repliesTo(h, fresh.messageId)).toEqual([NEW_SESSION_TEXT]);

    const third = await h.dispatcher.handle(inbound('1', 'success third', { chatId: chat }));
    if (third.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(third)}`);
    expect(await finished(third.runId)).toMatchObject({ parentRunId: null, status: 'completed' });

    const fourth = await h.dispatcher.handle(inbound('1', 'success fourth', { chatId: chat }));
    if (fourth.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(fourth)}`);
    expect(await finished(fourth.runId)).toMatchObject({ parentRunId: third.runId });
  });

  it('keeps conversations apart: another chat of the owner starts its own run', async () => {
    const result = await h.dispatcher.handle(
      inbound('1', 'success elsewhere', { chatId: '-100', isDirect: false, mentioned: true }),
    );
    if (result.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(result)}`);
    expect(await finished(result.runId)).toMatchObject({ parentRunId: null, status: 'completed' });
  });

  it('turns a message to an active run whose CLI takes none into a resumed run once it ends', async () => {
    const release = join(h.dir, 'release-5');
    const first = await h.dispatcher.handle(inbound('1', `until-file ${release}`, { chatId: '5' }));
    if (first.kind !== 'launched') throw new Error(`not launched: ${JSON.stringify(first)}`);
    await waitFor(async () => (await h.store.runs.getRun(first.runId))?.vendorSessionId != null, {
      what: 'the run to report its session',
    });
    const follow = inbound('1', 'success follow-up', { chatId: '5' });
    expect(await h.dispatcher.handle(follow)).toEqual({ kind: 'deferred' });
    expect(repliesTo(h, follow.messageId)).toEqual([steerDeferredText(`[run ${first.runId}]`, 'unsupported')]);
    await writeFile(release, '');
    await waitFor(async () => (await h.store.runs.recentRuns(3)).some((r) => r.parentRunId === first.runId), {
      what: 'the resumed run of the message',
    });
    await h.supervisor.idle();
    const resumed = (await h.store.runs.recentRuns(3)).find((r) => r.parentRunId === first.runId)!;
    expect(resumed).toMatchObject({ task: 'success follow-up', status: 'completed' });
    expect((await h.store.runs.getRun(first.runId))?.status).toBe('completed');
  });

  it('leaves a group message that does not name the bot alone', async () => {
    const message = inbound('1', 'success unaddressed', { chatId: '-200', isDirect: false });
    expect(await h.dispatcher.handle(message)).toEqual({ kind: 'ignored' });
    expect(repliesTo(h, message.messageId)).toEqual([]);
  });

  it("answers a guest's plain message as before and ignores a stranger's", async () => {
    const guest = inbound('2', 'success from a guest');
    expect((await h.dispatcher.handle(guest)).kind).toBe('answered');
    expect(repliesTo(h, guest.messageId)).toEqual([TEXT_IN_DM]);
    const stranger = inbound('3', 'success from a stranger');
    expect(await h.dispatcher.handle(stranger)).toEqual({ kind: 'ignored' });
    expect(repliesTo(h, stranger.messageId)).toEqual([]);
    expect((await h.store.runs.activeRuns()).length).toBe(0);
  });

  it('keeps today’s reading with plain_messages = "commands"', async () => {
    const message = inbound('1', 'success not a task');
    expect((await commands.dispatcher.handle(message)).kind).toBe('answered');
    expect(repliesTo(commands, message.messageId)).toEqual([TEXT_IN_DM]);
    expect(await commands.store.runs.recentRuns(1)).toEqual([]);
  });
});
