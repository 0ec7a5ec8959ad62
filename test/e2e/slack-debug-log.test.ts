/**
 * No log line contains a task's text (issue #18 item 6), at every level the owner may set:
 * `BATON_LOG_LEVEL=debug` is documented (config/env.ts), and a careless owner turns it on to
 * look into a Slack problem. Slack in Socket Mode through the real Bolt client in `baton start`,
 * a fake Slack on 127.0.0.1.
 *
 * Bolt's own loggers are wired into baton's (channels/slack/bolt-logger.ts) with only tokens
 * scrubbed: @slack/socket-mode logs `Received a message on the WebSocket: <payload>` at debug,
 * the whole event with the person's text, and @slack/web-api logs every `http request result`
 * (a `conversations.replies` answer holds the thread's messages, the task among them).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { WAIT_MS, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';

const TOKEN = 'xoxb-e2efake2';
const APP_TOKEN = 'xapp-e2efake2';
const OWNER = 'UOWNER02';
const CHANNEL = 'C0PROJ02';

let world: ChatE2E;
let slack: FakeSlack;

const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;

beforeAll(async () => {
  slack = await startFakeSlack({ botToken: TOKEN, appToken: APP_TOKEN });
  world = await startChatE2E({
    trust: { slack: { owner: OWNER } },
    env: { SLACK_BOT_TOKEN: TOKEN, SLACK_APP_TOKEN: APP_TOKEN, SLACK_API_URL: slack.url, BATON_LOG_LEVEL: 'debug' },
  });
  for (let i = 0; i < 200 && !/slack: connected/.test(world.service.stdout()); i++)
    await new Promise((r) => setTimeout(r, 50));
});

afterAll(async () => {
  await world?.dispose();
  await slack?.close();
});

describe('Slack at BATON_LOG_LEVEL=debug', () => {
  it("a command's text reaches no log line, neither from the event nor from a thread lookup", async () => {
    // A task refused before it runs (a NUL in it), so no answer of the agent can echo it.
    const secret = 'migrate the payroll db 7f3e91 with password hunter2';
    const task = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> /codex ${secret}\u0000`,
    });
    await slack.deliverSocket(task, 10_000);
    const refusal = await slack.waitForPosted(inThread(task.event.ts), WAIT_MS);
    expect(refusal.args.text).toMatch(/^Your message contains a NUL character/);
    // The owner writes in that thread: the adapter looks the thread up (conversations.replies).
    const followUp = slack.userMessage({
      kind: 'app_mention',
      channel: CHANNEL,
      user: OWNER,
      text: `<@${slack.bot.userId}> /runs`,
      threadTs: task.event.ts,
    });
    await slack.deliverSocket(followUp, 10_000);
    await slack.waitForPosted((p) => inThread(task.event.ts)(p) && p !== refusal, WAIT_MS);
    expect(slack.calls.some((c) => c.method === 'conversations.replies')).toBe(true);

    const logs = await logText();
    const leaking = [...new Set(logs.split('\n'))]
      .filter((line) => line.includes('7f3e91'))
      .map((line) => line.slice(0, 200));
    expect(leaking).toEqual([]);
  });
});

/** Everything the service logged: its stdout and the files under `$BATON_HOME/logs`. */
async function logText(): Promise<string> {
  const dir = join(world.batonHome, 'logs');
  const files = (await readdir(dir).catch(() => [])).filter((name) => name.endsWith('.log'));
  const texts = await Promise.all(files.map((name) => readFile(join(dir, name), 'utf8')));
  return [world.service.stdout(), world.service.stderr(), ...texts].join('\n');
}
