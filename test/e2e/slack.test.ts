/**
 * Slack end to end: the real Bolt client in `baton start` receives signed Events API POSTs on
 * SLACK_PORT and talks to a fake Slack Web API (SLACK_API_URL); runs go to the fake codex. All on
 * 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GUEST_REFUSAL } from '../../src/dispatch/trust.js';
import { startFakeSlack, type EventEnvelope, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'xoxb-e2efake1';
const SIGNING_SECRET = 'fake-signing-secret-for-tests';
const OWNER = 'UOWNER01';
const GUEST = 'UGUEST01';
const STRANGER = 'USTRANGE1';
const CHANNEL = 'C0PROJECT';

let world: ChatE2E;
let slack: FakeSlack;

const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;
const mention = (user: string, text: string, threadTs?: string): EventEnvelope =>
  slack.userMessage({
    kind: 'app_mention',
    channel: CHANNEL,
    user,
    text: `<@${slack.bot.userId}> ${text}`,
    ...(threadTs ? { threadTs } : {}),
  });

/** The owner's /help in a fresh thread, answered: everything delivered before it was handled. */
async function barrier(): Promise<void> {
  const marker = mention(OWNER, '/help');
  expect((await slack.deliver(marker)).status).toBe(200);
  await slack.waitForPosted(inThread(marker.event.ts), WAIT_MS);
}

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

describe('Slack over the HTTP Events API', () => {
  let request: EventEnvelope;
  let firstRunId: string;

  it('connects with the bot token and skips the unconfigured channels', () => {
    const out = world.service.stdout();
    expect(out).toMatch(/slack: connected/);
    expect(out).toMatch(/telegram: not started: TELEGRAM_BOT_TOKEN not set/);
    expect(out).toMatch(/discord: not started: DISCORD_BOT_TOKEN not set/);
    expect(slack.calls.filter((c) => c.method === 'auth.test').length).toBeGreaterThanOrEqual(1);
    expect(world.service.stdout() + world.service.stderr()).not.toContain(TOKEN);
  });

  it('launches a run from an owner mention without a slash, acks at once, answers in the thread', async () => {
    // Slack gives an event 3 s to be acknowledged: the ack must not wait for baton's first post,
    // so that post is held until the ack is in.
    const release = slack.holdNext('chat.postMessage');
    request = mention(OWNER, 'codex fix the test');
    const delivered = await slack.deliver(request);
    expect(delivered.status).toBe(200);
    expect(slack.posted.filter(inThread(request.event.ts))).toEqual([]);
    release();

    const started = await slack.waitForPosted(
      (p) => inThread(request.event.ts)(p) && p.args.text!.includes('] started'),
      WAIT_MS,
    );
    firstRunId = runIdOf(started.args.text!);
    expect(started.args.text).toBe(`[run ${firstRunId}] started · codex · ${world.repo}`);
    expect(started.args.channel).toBe(CHANNEL);
    expect(started.args.mrkdwn).toBe('false');
    const completed = await slack.waitForPosted(
      (p) => p.args.text!.startsWith(`[run ${firstRunId}] completed`),
      WAIT_MS,
    );
    expect(completed.args.thread_ts).toBe(request.event.ts);
    expect(completed.args.text).toContain('done: fix the test');
    console.info(`e2e slack: event acked in ${delivered.elapsedMs.toFixed(0)} ms while chat.postMessage took 4 s`);
  });

  it('launches nothing for a retry of the same event', async () => {
    const retry = await slack.deliver(request, { retryNum: 1 });
    expect(retry.status).toBe(200);
    await barrier();
    // Sorted: the slow `started` post of the previous test may land after the outcome.
    const answers = slack.posted
      .filter(inThread(request.event.ts))
      .map((p) => p.args.text!.split(' · ')[0])
      .sort();
    expect(answers).toEqual([`[run ${firstRunId}] completed`, `[run ${firstRunId}] started`]);
  });

  it('rejects a forged signature and a stale timestamp before anything runs', async () => {
    const forged = mention(OWNER, '/codex forged');
    expect((await slack.deliver(forged, { signingSecret: 'not-the-secret' })).status).toBe(401);
    const stale = mention(OWNER, '/codex stale');
    expect((await slack.deliver(stale, { timestampS: Math.floor(Date.now() / 1000) - 600 })).status).toBe(401);
    await barrier();
    expect(
      slack.posted.filter((p) => p.args.thread_ts === forged.event.ts || p.args.thread_ts === stale.event.ts),
    ).toEqual([]);
  });

  it('refuses a guest launch with the contract text, in the thread', async () => {
    const guest = mention(GUEST, '/codex delete everything');
    await slack.deliver(guest);
    const refusal = await slack.waitForPosted(inThread(guest.event.ts), WAIT_MS);
    expect(refusal.args.text).toBe(GUEST_REFUSAL);
  });

  it('ignores its own message and answers a stranger only /whoami in a DM', async () => {
    const own = slack.botMessage({ channel: 'D0OWNDM', text: '/codex loop forever' });
    expect((await slack.deliver(own)).status).toBe(200);
    const strangerMention = mention(STRANGER, '/whoami');
    await slack.deliver(strangerMention);
    const dm = slack.userMessage({ kind: 'im', channel: 'D0STRANGER', user: STRANGER, text: 'whoami' });
    await slack.deliver(dm);
    const whoami = await slack.waitForPosted(inThread(dm.event.ts), WAIT_MS);
    expect(whoami.args.text).toContain(`Your slack user id: ${STRANGER}`);
    await barrier();
    expect(
      slack.posted.filter((p) => p.args.channel === 'D0OWNDM' || p.args.thread_ts === strangerMention.event.ts),
    ).toEqual([]);
  });

  it('resumes the run when the owner mentions the bot in the run thread', async () => {
    const reply = mention(OWNER, 'and now the docs', request.event.ts);
    await slack.deliver(reply);
    const started = await slack.waitForPosted(
      (p) =>
        inThread(request.event.ts)(p) &&
        p.args.text!.includes('] started') &&
        !p.args.text!.startsWith(`[run ${firstRunId}]`),
      WAIT_MS,
    );
    const childId = runIdOf(started.args.text!);
    expect(started.args.text).toBe(`[run ${childId}] started · codex · ${world.repo} · resuming ${firstRunId}`);
    const done = await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${childId}] completed`), WAIT_MS);
    expect(done.args.text).toMatch(/resumed fake-session-\S+: and now the docs/);
    expect(done.args.thread_ts).toBe(request.event.ts);
    expect(slack.calls.some((c) => c.method === 'conversations.replies' && c.args.ts === request.event.ts)).toBe(true);
  });
});
