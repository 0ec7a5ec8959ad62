/**
 * The watchdog advisory (Keep waiting / +30 min / Stop) and the Stop under `started` act once per
 * message, on Telegram, Slack and Discord at once (one `baton start`, each platform against its
 * fake): two presses of one card delivered together (a double tap) are claimed in the database,
 * the first acts and the second is answered "Already pressed" and acts never; the card is edited
 * to the decision, without buttons. Runs go to the fake codex (`hang` is silent until stopped, so
 * the advisory comes after `inactivity_minutes = 1`).
 */
import type { Message } from 'grammy/types';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { discordUser, startFakeDiscord, type FakeDiscord, type SentMessage } from '../fakes/fake-discord.js';
import { startFakeSlack, type FakeSlack } from '../fakes/fake-slack.js';
import { startFakeTelegram, type FakeTelegram, type SendMessageBody } from '../fakes/fake-telegram.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TELEGRAM_TOKEN = '123456:TEST-token-for-the-run-buttons-test';
const SLACK_TOKEN = 'xoxb-runbuttons1';
const SLACK_SECRET = 'run-buttons-test-signing-secret';
const DISCORD_TOKEN = 'run-buttons.discord-token.for-tests';
const TELEGRAM_OWNER = 111;
const SLACK_OWNER = 'UOWNER01';
const SLACK_CHANNEL = 'C0BUTTONS';
const DISCORD_OWNER = discordUser('100000000000000001', 'owner');
const GUILD = '400000000000000001';
const GUILD_CHANNEL = '400000000000000002';
/** The advisory comes after a minute of silence; a loaded machine may take a while longer. */
const ADVISORY_WAIT_MS = 3 * WAIT_MS;

let world: ChatE2E;
let telegram: FakeTelegram;
let slack: FakeSlack;
let discord: FakeDiscord;

/** The two answers of a double tap, the acting one first. */
function split(answers: string[], acting: RegExp): [string, string] {
  const first = answers.find((a) => acting.test(a));
  const second = answers.find((a) => a !== first);
  return [String(first), String(second)];
}

beforeAll(async () => {
  const port = await freePort();
  telegram = await startFakeTelegram({ token: TELEGRAM_TOKEN });
  slack = await startFakeSlack({
    botToken: SLACK_TOKEN,
    events: { url: `http://127.0.0.1:${port}/slack/events`, signingSecret: SLACK_SECRET },
  });
  discord = await startFakeDiscord({
    token: DISCORD_TOKEN,
    guilds: [{ id: GUILD, name: 'team', channelIds: [GUILD_CHANNEL] }],
  });
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
    harnessToml: 'inactivity_minutes = 1',
  });
});

/** Cancels the test's run, if a failed test left it working: the next platform's run would queue behind it. */
let cancelLeftover: (() => Promise<void>) | undefined;
afterEach(async () => {
  const cancel = cancelLeftover;
  cancelLeftover = undefined;
  await cancel?.();
});

afterAll(async () => {
  await world?.dispose();
  await telegram?.close();
  await slack?.close();
  await discord?.close();
});

const EXTENDED = 'Wall clock now 60 minutes (at most 240).';
const STOPPED = /^Stop(ped\.| requested)/;
/** The answer to a press of a card another press has decided (or is deciding). */
const alreadyPressed = (first: string): RegExp =>
  new RegExp(`^Already pressed(: ${first.replace(/[.()]/g, '\\$&')}|; the first press is being acted on\\.)$`);

describe('advisory and Stop buttons act once per message', () => {
  it(
    'Telegram: a double +30 min extends once, a double Stop stops once, both cards give way',
    async () => {
      const buttonsOf = (body: SendMessageBody): Record<string, string> => {
        const rows =
          (body.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)
            ?.inline_keyboard ?? [];
        return Object.fromEntries(rows.flat().map((b) => [b.text, b.callback_data]));
      };
      const messageOf = (body: SendMessageBody): Message => telegram.sentMessages[telegram.sent.indexOf(body)]!;
      /** Presses `label` under `body` twice at once; resolves with both answers. */
      const doubleTap = async (body: SendMessageBody, label: string): Promise<string[]> => {
        const callbackData = buttonsOf(body)[label]!;
        const ids = [0, 1].map(() =>
          telegram.pressButton({ from: { id: TELEGRAM_OWNER }, message: messageOf(body), callbackData }),
        );
        const queries = ids.map((id) => `cbq-${id}-${TELEGRAM_OWNER}`);
        await waitFor(() => queries.every((q) => telegram.callbackAnswers.has(q)), {
          what: `the answers to ${label}`,
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });
        return queries.map((q) => String(telegram.callbackAnswers.get(q)!.text));
      };
      telegram.pushMessage({ chatId: TELEGRAM_OWNER, from: { id: TELEGRAM_OWNER }, text: '/codex timeout:30 hang' });
      const started = await telegram.waitForSent((m) => m.text.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.text);
      cancelLeftover = async () => {
        telegram.pushMessage({ chatId: TELEGRAM_OWNER, from: { id: TELEGRAM_OWNER }, text: `/cancel ${runId}` });
        await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      };
      const advisory = await telegram.waitForSent(
        (m) => m.text.startsWith(`[run ${runId}] No output from codex`),
        ADVISORY_WAIT_MS,
      );
      expect(Object.keys(buttonsOf(advisory))).toEqual(['Keep waiting', '+30 min', 'Stop']);

      const [extended, again] = split(await doubleTap(advisory, '+30 min'), /^Wall clock/);
      expect(extended).toBe(EXTENDED);
      expect(again).toMatch(alreadyPressed(EXTENDED));
      telegram.pushMessage({ chatId: TELEGRAM_OWNER, from: { id: TELEGRAM_OWNER }, text: `/runs ${runId}` });
      expect(
        (await telegram.waitForSent((m) => m.text.includes('timeout:') && m.text.includes(runId), WAIT_MS)).text,
      ).toContain('timeout: 60 min');
      const card = telegram.edits.find((e) => e.message_id === messageOf(advisory).message_id);
      expect(card?.text).toMatch(
        new RegExp(`^\\[run ${runId}\\] No output from codex[\\s\\S]*\\n\\n✓ ${EXTENDED.replace(/[.()]/g, '\\$&')}$`),
      );
      expect(card?.['reply_markup']).toBeUndefined();

      const [stopped, stopAgain] = split(await doubleTap(started, 'Stop'), STOPPED);
      expect(stopped).toMatch(STOPPED);
      expect(stopAgain).toMatch(alreadyPressed(stopped));
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      const stopEdit = telegram.edits.find(
        (e) => e.message_id === messageOf(started).message_id && e.text.endsWith(`\n\n✓ ${stopped}`),
      );
      expect(stopEdit).toBeDefined();
      expect(stopEdit?.['reply_markup']).toBeUndefined();
      expect(telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
    },
    2 * ADVISORY_WAIT_MS,
  );

  it(
    'Slack: a double +30 min extends once, a double Stop stops once, both cards give way',
    async () => {
      const answersTo = (from: number): string[] =>
        slack.ephemerals
          .slice(from)
          .filter((e) => e.args.user === SLACK_OWNER)
          .map((e) => String(e.args.text));
      /** Delivers two presses of `actionId` under `ts` at once; resolves with both answers. */
      const doubleTap = async (ts: string, actionId: string): Promise<string[]> => {
        const from = slack.ephemerals.length;
        const payloads = [0, 1].map(() =>
          slack.press({ channel: SLACK_CHANNEL, messageTs: ts, user: SLACK_OWNER, actionId }),
        );
        const acks = await Promise.all(payloads.map((p) => slack.deliverInteractive(p)));
        expect(acks.map((a) => a.status)).toEqual([200, 200]);
        await waitFor(() => answersTo(from).length === 2, {
          what: `the answers to ${actionId}`,
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });
        return answersTo(from);
      };
      const request = slack.userMessage({
        kind: 'app_mention',
        channel: SLACK_CHANNEL,
        user: SLACK_OWNER,
        text: `<@${slack.bot.userId}> codex timeout:30 hang`,
      });
      expect((await slack.deliver(request)).status).toBe(200);
      const started = await slack.waitForPosted(
        (p) => p.args.thread_ts === request.event.ts && p.args.text!.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.args.text!);
      cancelLeftover = async () => {
        await slack.deliver(
          slack.userMessage({
            kind: 'app_mention',
            channel: SLACK_CHANNEL,
            user: SLACK_OWNER,
            text: `<@${slack.bot.userId}> /cancel ${runId}`,
          }),
        );
        await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      };
      const advisory = await slack.waitForPosted(
        (p) => p.args.text!.startsWith(`[run ${runId}] No output from codex`),
        ADVISORY_WAIT_MS,
      );

      const [extended, again] = split(await doubleTap(advisory.message.ts, 'baton:extend'), /^Wall clock/);
      expect(extended).toBe(EXTENDED);
      expect(again).toMatch(alreadyPressed(EXTENDED));
      const view = slack.userMessage({
        kind: 'app_mention',
        channel: SLACK_CHANNEL,
        user: SLACK_OWNER,
        text: `<@${slack.bot.userId}> /runs ${runId}`,
        threadTs: request.event.ts,
      });
      expect((await slack.deliver(view)).status).toBe(200);
      expect(
        (await slack.waitForPosted((p) => p.args.text!.includes('timeout:') && p.args.text!.includes(runId), WAIT_MS))
          .args.text,
      ).toContain('timeout: 60 min');
      const card = slack.updates.find((u) => u.args.ts === advisory.message.ts);
      expect(card?.args.text).toMatch(new RegExp(`\\n\\n✓ ${EXTENDED.replace(/[.()]/g, '\\$&')}$`));
      expect((JSON.parse(card!.args.blocks!) as { type: string }[]).map((b) => b.type)).not.toContain('actions');

      const [stopped, stopAgain] = split(await doubleTap(started.message.ts, 'baton:stop'), STOPPED);
      expect(stopped).toMatch(STOPPED);
      expect(stopAgain).toMatch(alreadyPressed(stopped));
      await slack.waitForPosted((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      const stopEdit = slack.updates.find(
        (u) => u.args.ts === started.message.ts && u.args.text!.endsWith(`\n\n✓ ${stopped}`),
      );
      expect(stopEdit).toBeDefined();
      expect((JSON.parse(stopEdit!.args.blocks!) as { type: string }[]).map((b) => b.type)).not.toContain('actions');
      expect(slack.posted.filter((p) => p.args.text!.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
    },
    2 * ADVISORY_WAIT_MS,
  );

  it(
    'Discord: a double +30 min extends once, a double Stop stops once, both cards give way',
    async () => {
      const customIdOf = (m: SentMessage, label: string): string => {
        const rows = (m.body.components as { components: { custom_id: string; label: string }[] }[] | undefined) ?? [];
        return rows.flatMap((r) => r.components).find((c) => c.label === label)!.custom_id;
      };
      /** Presses `label` under `m` twice at once; resolves with both answers. */
      const doubleTap = async (m: SentMessage, label: string): Promise<string[]> => {
        const customId = customIdOf(m, label);
        const presses = [0, 1].map(() => discord.press({ messageId: m.message.id, user: DISCORD_OWNER, customId }));
        const answerTo = (id: unknown) =>
          discord.interactionReplies.find((r) => r.interactionId === id && r.kind === 'followup');
        await waitFor(() => presses.every((p) => answerTo(p.id)), {
          what: `the answers to ${label}`,
          timeoutMs: WAIT_MS,
          intervalMs: 50,
        });
        return presses.map((p) => String(answerTo(p.id)!.body.content));
      };
      const request = discord.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: DISCORD_OWNER,
        content: `<@${discord.botUser.id}> codex timeout:30 hang`,
      });
      const replyTo = (m: SentMessage): boolean =>
        (m.body.message_reference as { message_id?: string } | undefined)?.message_id === request.id;
      const started = await discord.waitForSent((m) => replyTo(m) && m.message.content.includes('] started'), WAIT_MS);
      const runId = runIdOf(started.message.content);
      cancelLeftover = async () => {
        discord.pushMessage({
          channelId: GUILD_CHANNEL,
          guildId: GUILD,
          author: DISCORD_OWNER,
          content: `<@${discord.botUser.id}> /cancel ${runId}`,
        });
        await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      };
      const advisory = await discord.waitForSent(
        (m) => m.message.content.startsWith(`[run ${runId}] No output from codex`),
        ADVISORY_WAIT_MS,
      );

      const [extended, again] = split(await doubleTap(advisory, '+30 min'), /^Wall clock/);
      expect(extended).toBe(EXTENDED);
      expect(again).toMatch(alreadyPressed(EXTENDED));
      const view = discord.pushMessage({
        channelId: GUILD_CHANNEL,
        guildId: GUILD,
        author: DISCORD_OWNER,
        content: `<@${discord.botUser.id}> /runs ${runId}`,
      });
      const viewed = await discord.waitForSent(
        (m) => (m.body.message_reference as { message_id?: string } | undefined)?.message_id === view.id,
        WAIT_MS,
      );
      expect(viewed.message.content).toContain('timeout: 60 min');
      const card = discord.edits.find((e) => e.messageId === advisory.message.id);
      expect(String(card?.body['content'])).toMatch(new RegExp(`\\n\\n✓ ${EXTENDED.replace(/[.()]/g, '\\$&')}$`));
      expect(card?.body['components']).toEqual([]);

      const [stopped, stopAgain] = split(await doubleTap(started, 'Stop'), STOPPED);
      expect(stopped).toMatch(STOPPED);
      expect(stopAgain).toMatch(alreadyPressed(stopped));
      await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
      const stopEdit = discord.edits.find(
        (e) => e.messageId === started.message.id && String(e.body['content']).endsWith(`\n\n✓ ${stopped}`),
      );
      expect(stopEdit).toBeDefined();
      expect(stopEdit?.body['components']).toEqual([]);
      expect(discord.sent.filter((m) => m.message.content.startsWith(`[run ${runId}] cancelled`))).toHaveLength(1);
    },
    2 * ADVISORY_WAIT_MS,
  );
});
