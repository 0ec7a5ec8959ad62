/**
 * One live status message per run on Slack (`chat.update` through Bolt's WebClient) and Discord
 * (Edit Message through discord.js's REST client), through `baton start` with the real codex CLI
 * against the fake Responses API: the `started` message is edited in place with the step and the
 * elapsed time, at most once per 5 s per conversation; the final edit says how the run ended; the
 * outcome stays a new message; a 429 on an edit holds later edits for its retry time without
 * delaying the outcome (a retry time longer than the run, so no assertion depends on how fast
 * the machine is). The Telegram side is status-message-telegram.test.ts.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';
import { startFakeOpenAI, type FakeOpenAI, type FakeTurn } from '../fakes/fake-openai.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

/** The throttle under test: the default, 5 s per conversation. */
const EDIT_INTERVAL_MS = 5_000;
/** A 429's retry time far longer than any run here, in seconds: the outcome must not wait for it. */
const HELD_S = 600;
/** Long enough for a real codex run of a dozen tool calls on a loaded machine. */
const RUN_WAIT_MS = 120_000;

/** `count` shell tool calls that each take about `sleepS` seconds, then a final answer. */
function toolBurst(count: number, sleepS: number, answer: string): FakeTurn[] {
  return [
    ...Array.from(
      { length: count },
      (_, i): FakeTurn => ({
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: `sleep ${sleepS}; echo step${i + 1}` },
        usage: { input_tokens: 100, output_tokens: 10 },
      }),
    ),
    { kind: 'message', text: answer, usage: { input_tokens: 100, output_tokens: 20 } },
  ];
}

/** What every platform's edits of one run must show; `texts` in order, `times` when each arrived. */
function expectLiveStatus(startedText: string, texts: string[], times: number[], toolCalls: number): void {
  const live = texts.slice(0, -1);
  expect(live.length).toBeGreaterThan(0);
  for (const text of live) {
    expect(text.split('\n')[0]).toBe(startedText);
    expect(text).toMatch(/^running · \d+(ms|s|m \d{2}s)( · |$)/m);
  }
  expect(live.some((t) => /step: running sleep 1; echo step\d+/.test(t))).toBe(true);
  expect(texts.at(-1)!.split('\n')[1]).toMatch(/^completed · \d+(s|m \d{2}s) · [\d,]+ tokens/);
  expect(texts.length).toBeLessThan(toolCalls);
  for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(EDIT_INTERVAL_MS);
}

describe('Slack: the started message is the live status of its run (chat.update)', () => {
  const TOKEN = 'xoxb-e2efake-status';
  const SIGNING_SECRET = 'fake-signing-secret-status';
  const OWNER = 'UOWNER01';
  const CHANNEL = 'C0STATUS';
  let world: ChatE2E;
  let slack: FakeSlack;
  let model: FakeOpenAI;

  beforeAll(async () => {
    const port = await freePort();
    model = await startFakeOpenAI();
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
      realCodex: { binDirs: [inject('codexBinDir')], openaiUrl: model.url },
    });
  });

  afterAll(async () => {
    await world?.dispose();
    await slack?.close();
    await model?.close();
  });

  const launch = async (task: string): Promise<{ runId: string; channel: string; ts: string; text: string }> => {
    const request = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> codex ${task}`,
    });
    expect((await slack.deliver(request)).status).toBe(200);
    const started = await slack.waitForPosted(
      (p) => p.args.thread_ts === request.event.ts && p.args.text?.includes('] started · codex') === true,
      WAIT_MS,
    );
    return {
      runId: runIdOf(started.args.text!),
      channel: started.message.channel,
      ts: started.message.ts,
      text: started.args.text!,
    };
  };

  it('is edited with the step and elapsed time, throttled; the final edit says how it ended; the outcome is a new message', async () => {
    const toolCalls = 10;
    model.enqueue(...toolBurst(toolCalls, 1, 'Slack burst done.'));
    const started = await launch('run the burst');
    const outcome = await slack.waitForPosted(
      (p) => p.args.text?.startsWith(`[run ${started.runId}] completed`) === true,
      RUN_WAIT_MS,
    );
    expect(outcome.message.ts).not.toBe(started.ts);
    const mine = () => slack.updates.filter((u) => u.args.channel === started.channel && u.args.ts === started.ts);
    await waitFor(() => mine().some((u) => /^completed · /m.test(u.args.text ?? '')), {
      timeoutMs: WAIT_MS,
      what: 'the final chat.update',
      intervalMs: 100,
    });
    expectLiveStatus(
      started.text,
      mine().map((u) => u.args.text!),
      mine().map((u) => u.atMs),
      toolCalls,
    );
  });

  it('holds later edits for the Retry-After of a 429, without delaying the outcome', async () => {
    // A Retry-After far longer than the run: the outcome must arrive while edits are held, and no
    // edit may arrive meanwhile (edits resuming after the wait: test/delivery/live-status.test.ts).
    slack.failNext('chat.update', { status: 429, retryAfterS: HELD_S });
    model.enqueue(...toolBurst(3, 1, 'Slack rate limited, still done.'));
    const started = await launch('run while rate limited');
    await waitFor(() => slack.calls.some((c) => c.method === 'chat.update' && c.args.ts === started.ts), {
      timeoutMs: RUN_WAIT_MS,
      what: 'the refused chat.update',
      intervalMs: 100,
    });
    const refused = slack.calls.find((c) => c.method === 'chat.update' && c.args.ts === started.ts)!;
    await slack.waitForPosted((p) => p.args.text?.startsWith(`[run ${started.runId}] completed`) === true, RUN_WAIT_MS);
    await waitFor(() => Date.now() >= refused.atMs + 2 * EDIT_INTERVAL_MS, {
      timeoutMs: WAIT_MS,
      what: 'two edit intervals',
      intervalMs: 100,
    });
    const barrier = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> /help`,
    });
    expect((await slack.deliver(barrier)).status).toBe(200);
    await slack.waitForPosted((p) => p.args.thread_ts === barrier.event.ts, WAIT_MS);
    expect(slack.updates.filter((u) => u.args.ts === started.ts)).toEqual([]);
    expect(slack.calls.filter((c) => c.method === 'chat.update' && c.atMs > refused.atMs)).toEqual([]);
  });
});

describe('Discord: the started message is the live status of its run (Edit Message)', () => {
  const TOKEN = 'fake.discord-bot-token.status';
  const OWNER = discordUser('100000000000000001', 'owner');
  const OWNER_DM = '300000000000000001';
  let world: ChatE2E;
  let discord: FakeDiscord;
  let model: FakeOpenAI;

  beforeAll(async () => {
    model = await startFakeOpenAI();
    discord = await startFakeDiscord({ token: TOKEN });
    world = await startChatE2E({
      trust: { discord: { owner: OWNER.id } },
      env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
      realCodex: { binDirs: [inject('codexBinDir')], openaiUrl: model.url },
    });
  });

  afterAll(async () => {
    await world?.dispose();
    await discord?.close();
    await model?.close();
  });

  const launch = async (task: string): Promise<{ runId: string; id: string; text: string }> => {
    const request = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: `/codex ${task}` });
    const started = await discord.waitForSent(
      (m) =>
        (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id &&
        m.message.content.includes('] started · codex'),
      WAIT_MS,
    );
    return { runId: runIdOf(started.message.content), id: started.message.id, text: started.message.content };
  };

  it('is edited with the step and elapsed time, throttled; the final edit says how it ended; the outcome is a new message', async () => {
    const toolCalls = 10;
    model.enqueue(...toolBurst(toolCalls, 1, 'Discord burst done.'));
    const started = await launch('run the burst');
    const outcome = await discord.waitForSent(
      (m) => m.message.content.startsWith(`[run ${started.runId}] completed`),
      RUN_WAIT_MS,
    );
    expect(outcome.message.id).not.toBe(started.id);
    const mine = () => discord.edits.filter((e) => e.channelId === OWNER_DM && e.messageId === started.id);
    await waitFor(() => mine().some((e) => /^completed · /m.test(String(e.body.content))), {
      timeoutMs: WAIT_MS,
      what: 'the final edit',
      intervalMs: 100,
    });
    expectLiveStatus(
      started.text,
      mine().map((e) => String(e.body.content)),
      mine().map((e) => e.atMs),
      toolCalls,
    );
    // No mention in a status can ping anyone.
    expect(mine().every((e) => JSON.stringify(e.body.allowed_mentions) === JSON.stringify({ parse: [] }))).toBe(true);
  });

  it('holds later edits for the retry_after of a 429, without delaying the outcome', async () => {
    discord.failNextEdit(OWNER_DM, { status: 429, retryAfterS: HELD_S });
    model.enqueue(...toolBurst(3, 1, 'Discord rate limited, still done.'));
    const started = await launch('run while rate limited');
    const patchPath = `/channels/${OWNER_DM}/messages/${started.id}`;
    await waitFor(
      () => discord.restCalls.some((c) => c.method === 'PATCH' && c.path === patchPath && c.status === 429),
      { timeoutMs: RUN_WAIT_MS, what: 'the refused edit', intervalMs: 100 },
    );
    const refused = discord.restCalls.find((c) => c.method === 'PATCH' && c.path === patchPath && c.status === 429)!;
    await discord.waitForSent((m) => m.message.content.startsWith(`[run ${started.runId}] completed`), RUN_WAIT_MS);
    await waitFor(() => Date.now() >= refused.atMs + 2 * EDIT_INTERVAL_MS, {
      timeoutMs: WAIT_MS,
      what: 'two edit intervals',
      intervalMs: 100,
    });
    const barrier = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: '/help' });
    await discord.waitForSent(
      (m) => (m.body.message_reference as { message_id?: string } | undefined)?.message_id === barrier.id,
      WAIT_MS,
    );
    expect(discord.edits.filter((e) => e.messageId === started.id)).toEqual([]);
    expect(discord.restCalls.filter((c) => c.method === 'PATCH' && c.atMs > refused.atMs)).toEqual([]);
  });
});
