/**
 * Slack: a conversation's `/use` default and the files held for its next launch belong to the
 * conversation (the DM or channel's top level, or one thread), the key the next command looks up
 * — not to the message that set them, whose answers open a thread under it.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'xoxb-e2efake-default';
const SIGNING_SECRET = 'fake-signing-secret-default';
const OWNER = 'UOWNER01';
const DM = 'D0OWNERDM';
const CHANNEL = 'C0PROJECT';

let world: ChatE2E;
let slack: FakeSlack;
let other: string;
let third: string;

const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;

async function say(
  kind: 'im' | 'app_mention',
  text: string,
  threadTs?: string,
  files?: { name: string; bytes: Buffer }[],
): Promise<PostedMessage> {
  const channel = kind === 'im' ? DM : CHANNEL;
  const envelope = slack.userMessage({
    kind,
    channel,
    user: OWNER,
    text: kind === 'im' ? text : `<@${slack.bot.userId}> ${text}`,
    ...(threadTs ? { threadTs } : {}),
    ...(files ? { files } : {}),
  });
  const before = new Set(slack.posted);
  expect((await slack.deliver(envelope)).status).toBe(200);
  return slack.waitForPosted(
    (p) =>
      !before.has(p) &&
      p.args.channel === channel &&
      inThread(threadTs ?? envelope.event.ts)(p) &&
      !p.args.text!.includes('] completed'),
    WAIT_MS,
  );
}

beforeAll(async () => {
  const port = await freePort();
  slack = await startFakeSlack({
    botToken: TOKEN,
    events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET },
  });
  world = await startChatE2E({
    trust: { slack: { owner: OWNER } },
    env: {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_PORT: String(port),
      SLACK_API_URL: slack.url,
    },
  });
  other = join(dirname(world.repo), 'other');
  third = join(dirname(world.repo), 'third');
  await mkdir(other, { recursive: true });
  await mkdir(third, { recursive: true });
});

afterAll(async () => {
  await world?.dispose();
  await slack?.close();
});

describe('Slack conversation defaults', () => {
  it('a /use at the top level of a DM is the default of the next top-level command there', async () => {
    const confirmed = await say('im', `use ${other}`);
    expect(confirmed.args.text).toBe(`Runs in this conversation now default to ${other}.`);
    const started = await say('im', 'codex where am I');
    expect(started.args.text).toBe(`[run ${runIdOf(started.args.text!)}] started · codex · ${other}`);
  });

  it("a /use inside a thread is that thread's default only; the channel's top level keeps its own", async () => {
    const root = await say('app_mention', 'help');
    const thread = root.args.thread_ts!;
    expect((await say('app_mention', `use ${third}`, thread)).args.text).toBe(
      `Runs in this conversation now default to ${third}.`,
    );
    const inside = await say('app_mention', 'codex in the thread', thread);
    expect(inside.args.text).toContain(`] started · codex · ${third}`);
    const top = await say('app_mention', 'codex at the top');
    expect(top.args.text).toContain(`] started · codex · ${world.repo}`);
  });

  it('a file shared alone at the top level of a DM goes with the next top-level launch there', async () => {
    const held = await say('im', '', undefined, [{ name: 'notes.txt', bytes: Buffer.from('remember the milk\n') }]);
    expect(held.args.text).toMatch(/^Got it/);
    const started = await say('im', 'codex read the notes');
    expect(started.args.text).toContain('notes.txt');
  });
});
