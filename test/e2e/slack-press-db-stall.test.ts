/**
 * A button press while the database stalls (PostgreSQL behind a TCP proxy that holds what baton
 * sends): Slack wants the press acknowledged within 3 s, so the ack may not wait for the inbox
 * write. The press is acknowledged at once and acted on once the database answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { startTcpProxy, type TcpProxy } from '../fakes/tcp-proxy.js';
import { WAIT_MS, freePort, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'xoxb-e2efake-stall';
const SIGNING_SECRET = 'fake-signing-secret-stall';
const OWNER = 'UOWNER01';
const CHANNEL = 'C0PROJECT';
const onPostgres = Boolean(process.env.DATABASE_URL);

let world: ChatE2E;
let slack: FakeSlack;
let proxy: TcpProxy;

beforeAll(async () => {
  if (!onPostgres) return;
  const server = new URL(process.env.DATABASE_URL!);
  proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
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
    adjustEnv: (env) => ({ ...env, DATABASE_URL: proxy.rewrite(env.DATABASE_URL!) }),
  });
});

afterAll(async () => {
  await world?.dispose();
  await slack?.close();
  await proxy?.close();
});

describe.runIf(onPostgres)('a Slack button press during a database stall', () => {
  it('is acknowledged before the database answers, and acted on after', async () => {
    const request = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> codex fix it`,
    });
    expect((await slack.deliver(request)).status).toBe(200);
    const started = await slack.waitForPosted(
      (p) => p.args.thread_ts === request.event.ts && p.args.text!.includes('] started'),
      WAIT_MS,
    );
    const release = proxy.hold();
    let released = false;
    // The stall outlasts Slack's 3 s; released after 10 s at the latest, so a failing ack cannot hang the test.
    const fallback = setTimeout(() => {
      released = true;
      release();
    }, 10_000);
    const acked = await slack.deliverInteractive(
      slack.press({ channel: CHANNEL, messageTs: started.message.ts, user: OWNER, actionId: 'baton:stop' }),
    );
    const ackedDuringStall = !released;
    clearTimeout(fallback);
    release();
    expect(acked.status).toBe(200);
    expect(ackedDuringStall).toBe(true);
    await waitFor(() => slack.ephemerals.some((e) => e.args.user === OWNER), {
      what: 'an ephemeral to the owner',
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    expect(slack.ephemerals.find((e) => e.args.user === OWNER)!.args.text).toMatch(
      /^(Stop|That run has already finished)/,
    );
  }, 120_000);
});
