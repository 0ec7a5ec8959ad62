/**
 * Slack `file_share` (issue #13) through `baton start` with the real Bolt app on the signed HTTP
 * Events API: the owner's files are downloaded with the bot token and go with the task; a guest's
 * are never downloaded. Runs go to the fake codex, which names the images it was given.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'xoxb-e2efake2';
const SIGNING_SECRET = 'fake-signing-secret-for-attachment-tests';
const OWNER = 'UOWNER01';
const GUEST = 'UGUEST01';
const CHANNEL = 'C0PROJECT';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let world: ChatE2E;
let slack: FakeSlack;
const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;

beforeAll(async () => {
  const port = await freePort();
  slack = await startFakeSlack({
    botToken: TOKEN,
    events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SIGNING_SECRET },
  });
  world = await startChatE2E({
    trust: { slack: { owner: OWNER, guests: [GUEST] } },
    env: {
      SLACK_BOT_TOKEN: TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_PORT: String(port),
      SLACK_API_URL: slack.url,
    },
  });
});
afterAll(async () => {
  await world?.dispose();
  await slack?.close();
});

describe('Slack file_share', () => {
  it('the owner’s screenshot and log go with the task, downloaded with the bot token', async () => {
    const event = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> /codex fix what these show`,
      files: [
        { name: 'shot.png', bytes: PNG },
        { name: 'build.log', bytes: Buffer.from('error TS2345 on line 9\n') },
      ],
    });
    expect((await slack.deliver(event)).status).toBe(200);
    const started = await slack.waitForPosted(
      (p) => inThread(event.event.ts)(p) && String(p.args.text).includes('] started'),
      WAIT_MS,
    );
    expect(String(started.args.text)).toContain('· with shot.png (');
    const runId = runIdOf(String(started.args.text));
    const done = await slack.waitForPosted((p) => String(p.args.text).startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(String(done.args.text)).toContain('[images: 1-shot.png]');
    expect(await readFile(join(world.batonHome, 'harness', 'runs', runId, 'prompt.md'), 'utf8')).toBe(
      'fix what these show\n\n--- Attached file: build.log ---\nerror TS2345 on line 9\n',
    );
    expect(slack.fileDownloads.filter((d) => d.authorized)).toHaveLength(2);
  });

  it('a guest’s files are never downloaded', async () => {
    const before = slack.fileDownloads.length;
    const event = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: GUEST,
      text: `<@${slack.bot.userId}> /codex look`,
      files: [{ name: 'x.png', bytes: PNG }],
    });
    expect((await slack.deliver(event)).status).toBe(200);
    const answer = await slack.waitForPosted(inThread(event.event.ts), WAIT_MS);
    expect(String(answer.args.text)).toBe('Coding runs are available to the owner only.');
    expect(slack.fileDownloads.length).toBe(before);
  });

  it('a file sent alone at the top level goes with the owner’s next top-level /codex', async () => {
    const file = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}>`,
      files: [{ name: 'alone.png', bytes: PNG }],
    });
    expect((await slack.deliver(file)).status).toBe(200);
    const held = await slack.waitForPosted(inThread(file.event.ts), WAIT_MS);
    expect(String(held.args.text)).toContain('goes with your next /codex');
    const event = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> /codex what does it show`,
    });
    expect((await slack.deliver(event)).status).toBe(200);
    const started = await slack.waitForPosted(
      (p) => inThread(event.event.ts)(p) && String(p.args.text).includes('] started'),
      WAIT_MS,
    );
    expect(String(started.args.text)).toContain('· with alone.png (');
    const runId = runIdOf(String(started.args.text));
    const done = await slack.waitForPosted((p) => String(p.args.text).startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(String(done.args.text)).toContain('[images: 1-alone.png]');
  });

  it('a guest’s file sent alone is not held: the guest is told they cannot launch', async () => {
    const before = slack.fileDownloads.length;
    const file = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: GUEST,
      text: `<@${slack.bot.userId}>`,
      files: [{ name: 'guest.png', bytes: PNG }],
    });
    expect((await slack.deliver(file)).status).toBe(200);
    const answer = await slack.waitForPosted(inThread(file.event.ts), WAIT_MS);
    expect(String(answer.args.text)).toBe('Coding runs are available to the owner only.');
    expect(slack.fileDownloads.length).toBe(before);
  });
});
