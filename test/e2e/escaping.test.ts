/**
 * User text echoed back is harmless on every platform: one `baton start` with Telegram, Slack and
 * Discord at once (each against its fake), and a task whose `in:` option holds a Slack special
 * mention, `@everyone`, Markdown and HTML metacharacters. baton refuses the unknown alias and
 * quotes it; the quote must arrive as plain text that pings nobody.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { WAIT_MS, freePort, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const HOSTILE = '<!channel>@everyone*_<b>';
const TASK = `/codex in:${HOSTILE} task`;
const REFUSAL = `"${HOSTILE}" is not a project alias.`;

const TELEGRAM_TOKEN = '123456:TEST-token-for-the-escaping-test';
const SLACK_TOKEN = 'xoxb-escfake1';
const SLACK_SECRET = 'escaping-test-signing-secret';
const DISCORD_TOKEN = 'escaping.discord-token.for-tests';
const TELEGRAM_OWNER = 111;
const SLACK_OWNER = 'UOWNER01';
const DISCORD_OWNER = discordUser('100000000000000001', 'owner');

let world: ChatE2E;
let telegram: FakeTelegram;
let slack: FakeSlack;
let discord: FakeDiscord;

beforeAll(async () => {
  const port = await freePort();
  telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
  slack = await startFakeSlack({
    botToken: SLACK_TOKEN,
    events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SLACK_SECRET },
  });
  discord = await startFakeDiscord({ token: DISCORD_TOKEN });
  world = await startChatE2E({
    trust: {
      telegram: { owner: String(TELEGRAM_OWNER) },
      slack: { owner: SLACK_OWNER },
      discord: { owner: DISCORD_OWNER.id },
    },
    env: {
      TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      TELEGRAM_API_ROOT: telegram.url,
      SLACK_BOT_TOKEN: SLACK_TOKEN,
      SLACK_SIGNING_SECRET: SLACK_SECRET,
      SLACK_PORT: String(port),
      SLACK_API_URL: slack.url,
      DISCORD_BOT_TOKEN: DISCORD_TOKEN,
      DISCORD_API_URL: discord.url,
    },
  });
});

afterAll(async () => {
  await world?.dispose();
  await Promise.all([telegram?.close(), slack?.close(), discord?.close()]);
});

describe('hostile text echoed on all three platforms', () => {
  it('runs the three channels side by side', () => {
    const out = world.service.stdout();
    for (const platform of ['telegram', 'slack', 'discord']) expect(out).toMatch(new RegExp(`${platform}: connected`));
  });

  it('Telegram: the refusal quotes the text verbatim, without parse_mode', async () => {
    telegram.pushMessage({ chatId: TELEGRAM_OWNER, from: { id: TELEGRAM_OWNER }, text: TASK });
    const refusal = await telegram.waitForSent((m) => m.text.includes('is not a project alias'), WAIT_MS);
    expect(refusal.text.startsWith(REFUSAL)).toBe(true);
    expect(refusal.parse_mode).toBeUndefined();
    expect(refusal.entities).toBeUndefined();
  });

  it('Slack: the refusal escapes &, < and > and turns Markdown off, so nothing pings or formats', async () => {
    // What Slack sends when a person types the task: the three characters arrive as entities.
    const typed = slack.userMessage({
      kind: 'app_mention',
      channel: 'C0ESC',
      user: SLACK_OWNER,
      text: `<@${slack.bot.userId}> /codex in:&lt;!channel&gt;@everyone*_&lt;b&gt; task`,
    });
    await slack.deliver(typed);
    const refusal = await slack.waitForPosted((p) => p.args.thread_ts === typed.event.ts, WAIT_MS);
    expect(refusal.args.text!.startsWith('"&lt;!channel&gt;@everyone*_&lt;b&gt;" is not a project alias.')).toBe(true);
    expect(refusal.args.mrkdwn).toBe('false');

    // A real @channel mention (`<!channel>`) comes back as the words "@channel", never as markup.
    const real = slack.userMessage({
      kind: 'app_mention',
      channel: 'C0ESC',
      user: SLACK_OWNER,
      text: `<@${slack.bot.userId}> /codex in:<!channel> task`,
    });
    await slack.deliver(real);
    const second = await slack.waitForPosted((p) => p.args.thread_ts === real.event.ts, WAIT_MS);
    expect(second.args.text!.startsWith('"@channel" is not a project alias.')).toBe(true);
    for (const posted of [refusal, second]) expect(posted.args.text).not.toMatch(/<[!@#]/);
  });

  it('Discord: the refusal quotes the text with every mention suppressed', async () => {
    const request = discord.pushMessage({ channelId: '300000000000000001', author: DISCORD_OWNER, content: TASK });
    const refusal = await discord.waitForSent(
      (m) => (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id,
      WAIT_MS,
    );
    expect(refusal.message.content.startsWith(REFUSAL)).toBe(true);
    expect(refusal.body.allowed_mentions).toMatchObject({ parse: [] });
  });

  it('logged nothing secret: debug-level logs hold no token or signing secret, and no Slack SDK debug line', () => {
    const logs = world.service.stdout() + world.service.stderr();
    // @slack/web-api's debug lines carry every API answer (a thread's messages): never logged.
    expect(logs).not.toMatch(/chat\.postMessage/);
    for (const secret of [TELEGRAM_TOKEN, SLACK_TOKEN, SLACK_SECRET, DISCORD_TOKEN]) expect(logs).not.toContain(secret);
  });
});
