/**
 * Slack audio clips through `baton start` with the real Bolt app on the signed HTTP Events API:
 * the owner's clip is downloaded with the bot token and transcribed by a fake OpenAI-compatible
 * endpoint, shown with Run and Edit, and Run launches it; a guest's clip is never downloaded.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeSlack, type FakeSlack, type PostedMessage } from '../fakes/fake-slack.js';
import { startFakeTranscription, type FakeTranscription } from '../fakes/fake-transcription.js';
import { WAIT_MS, freePort, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'xoxb-e2efake-voice';
const SIGNING_SECRET = 'fake-signing-secret-for-voice-tests';
const VOICE_KEY = 'sk-slack-voice-canary-key';
const OWNER = 'UOWNER01';
const GUEST = 'UGUEST01';
const CHANNEL = 'C0PROJECT';
const CLIP = Buffer.from('\u001aE\u00df\u00a3 fake webm audio clip');

let world: ChatE2E;
let slack: FakeSlack;
let voice: FakeTranscription;
const inThread =
  (ts: string) =>
  (p: PostedMessage): boolean =>
    p.args.thread_ts === ts;

beforeAll(async () => {
  const port = await freePort();
  voice = await startFakeTranscription({ key: VOICE_KEY });
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
    extraToml: ['[voice]', `url = ${JSON.stringify(voice.url)}`, 'model = "whisper-1"', 'key_env = "VOICE_KEY"'].join(
      '\n',
    ),
    dotEnv: { VOICE_KEY },
    // Listed on purpose: the voice key never reaches a run even then (the stop check reads the
    // fake CLI's environment for it).
    harnessToml: 'pass_env = ["VOICE_KEY"]',
  });
});
afterAll(async () => {
  await world?.dispose();
  await slack?.close();
  await voice?.close();
});

/** An audio clip recorded in Slack, in a mention of the bot from `user`. */
const clipFrom = (user: string) =>
  slack.userMessage({
    kind: 'app_mention',
    channel: CHANNEL,
    user,
    text: `<@${slack.bot.userId}>`,
    files: [{ name: 'Audio Clip.webm', bytes: CLIP, audio: { mimetype: 'audio/webm', durationMs: 3200 } }],
  });

/** The buttons under a posted message, as `label → action_id`. */
const buttonsOf = (p: PostedMessage): Record<string, string> => {
  const blocks = JSON.parse(p.args.blocks ?? '[]') as {
    type: string;
    elements?: { action_id: string; text: { text: string } }[];
  }[];
  return Object.fromEntries(
    blocks
      .filter((b) => b.type === 'actions')
      .flatMap((b) => b.elements!)
      .map((e) => [e.text.text, e.action_id]),
  );
};

describe('Slack audio clips', () => {
  it('the owner’s clip is transcribed, shown with Run and Edit, and Run launches it', async () => {
    voice.enqueue({ kind: 'text', text: 'Codex, tidy the imports.' });
    const event = clipFrom(OWNER);
    expect((await slack.deliver(event)).status).toBe(200);
    const confirm = await slack.waitForPosted(
      (p) => inThread(event.event.ts)(p) && String(p.args.text).includes('I heard'),
      WAIT_MS,
    );
    expect(Object.keys(buttonsOf(confirm))).toEqual(['Run', 'Edit']);
    const sent = voice.requests.at(-1)!;
    expect(sent).toMatchObject({ status: 200, authorization: `Bearer ${VOICE_KEY}`, fields: { model: 'whisper-1' } });
    expect(sent.file?.bytes.equals(CLIP)).toBe(true);
    expect(slack.fileDownloads.filter((d) => d.authorized)).toHaveLength(1);

    const before = slack.ephemerals.length;
    await slack.deliverInteractive(
      slack.press({
        channel: CHANNEL,
        messageTs: confirm.message.ts,
        user: OWNER,
        actionId: buttonsOf(confirm)['Run']!,
      }),
    );
    const started = await slack.waitForPosted(
      (p) => inThread(event.event.ts)(p) && String(p.args.text).includes('] started'),
      WAIT_MS,
    );
    expect(String(started.args.text)).toContain('🎙 Codex, tidy the imports.');
    await waitFor(() => slack.ephemerals.slice(before).some((e) => e.args.user === OWNER), {
      what: 'the answer to Run',
      timeoutMs: WAIT_MS,
    });
    const runId = runIdOf(String(started.args.text));
    const audio = await readFile(join(world.batonHome, 'harness', 'runs', runId, 'voice-note.webm'));
    expect(audio.equals(CLIP)).toBe(true);
  });

  it('a guest’s clip is never downloaded nor sent', async () => {
    const before = { downloads: slack.fileDownloads.length, transcriptions: voice.requests.length };
    const event = clipFrom(GUEST);
    expect((await slack.deliver(event)).status).toBe(200);
    const answer = await slack.waitForPosted(inThread(event.event.ts), WAIT_MS);
    expect(String(answer.args.text)).toBe('Voice notes are transcribed for the owner only.');
    expect({ downloads: slack.fileDownloads.length, transcriptions: voice.requests.length }).toEqual(before);
  });
});
