/**
 * Attachment downloads are retried when a retry can help and answered at once when it cannot
 * (issue #13 item 3), through `baton start`, the real discord.js client and the fake Discord CDN,
 * which fails the downloads a test chooses: a 5xx, a cut connection and a 429 with `Retry-After`
 * are retried with backoff (3 tries), a 404 (an expired link) is answered in one line naming the
 * file, and a failure that outlasts the tries is answered the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  discordUser,
  startFakeDiscord,
  type DiscordMessage,
  type FakeDiscord,
  type SentMessage,
} from '../fakes/fake-discord.js';
import { WAIT_MS, runIdOf, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'fake.discord-bot-token.for-download-tests';
const OWNER = discordUser('100000000000000021', 'owner');
const OWNER_DM = '300000000000000021';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let world: ChatE2E;
let discord: FakeDiscord;

const replyTo =
  (message: DiscordMessage) =>
  (m: SentMessage): boolean =>
    (m.body.message_reference as { message_id?: string } | undefined)?.message_id === message.id;
const withShot = (): DiscordMessage =>
  discord.pushMessage({
    channelId: OWNER_DM,
    author: OWNER,
    content: '/codex argv fix what the screenshot shows',
    attachments: [{ name: 'shot.png', bytes: PNG, contentType: 'image/png' }],
  });

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN });
  world = await startChatE2E({
    trust: { discord: { owner: OWNER.id } },
    env: { DISCORD_BOT_TOKEN: TOKEN, DISCORD_API_URL: discord.url },
  });
});
afterAll(async () => {
  await world?.dispose();
  await discord?.close();
});

describe('attachment download retries', () => {
  it('retries a 503, a cut connection and a 429 with Retry-After; the image reaches the run', async () => {
    for (const faults of [[{ status: 503 }], [{ reset: true as const }, { status: 429, retryAfterS: 1 }]]) {
      const before = discord.attachmentDownloads.length;
      discord.faultDownloads(...faults);
      const request = withShot();
      const started = await discord.waitForSent(
        (m) => replyTo(request)(m) && m.message.content.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.message.content);
      const done = await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] completed`), WAIT_MS);
      expect(done.message.content).toContain('[images: 1-shot.png]');
      expect(discord.attachmentDownloads.length - before).toBe(faults.length + 1);
    }
  });

  it('a stalled download is cut by its read deadline and tried again', async () => {
    const before = discord.attachmentDownloads.length;
    // The CDN sends nothing for two minutes: only a deadline of baton's own ends that try.
    discord.faultDownloads({ holdMs: 120_000 });
    const request = withShot();
    const started = await discord.waitForSent(
      (m) => replyTo(request)(m) && m.message.content.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.message.content);
    const done = await discord.waitForSent((m) => m.message.content.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(done.message.content).toContain('[images: 1-shot.png]');
    expect(discord.attachmentDownloads.length - before).toBe(2);
  });

  it('/stop is answered while a launch waits on a stalled download, and stops that launch too', async () => {
    const before = discord.attachmentDownloads.length;
    discord.faultDownloads({ holdMs: 120_000 });
    const request = withShot();
    await waitFor(() => discord.attachmentDownloads.length > before, {
      what: 'another attachment download',
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    const stop = discord.pushMessage({ channelId: OWNER_DM, author: OWNER, content: '/stop' });
    const stopped = await discord.waitForSent(replyTo(stop), WAIT_MS);
    expect(stopped.message.content).toBe('Stopped 0 active runs. Stopped 1 launch still downloading its files.');
    const answer = await discord.waitForSent(replyTo(request), WAIT_MS);
    expect(answer.message.content).toBe(
      'Stopped before it started: /stop came while its files were downloading. Send the command again to run it.',
    );
    expect(discord.attachmentDownloads.length - before).toBe(1);
  });

  it('answers an expired link (404) at once, naming the file, without retrying', async () => {
    const before = discord.attachmentDownloads.length;
    discord.faultDownloads({ status: 404 });
    const request = withShot();
    const answer = await discord.waitForSent(replyTo(request), WAIT_MS);
    expect(answer.message.content).toBe(
      'Could not download shot.png: Discord no longer has it (HTTP 404; its link may have expired). Send it again.',
    );
    expect(discord.attachmentDownloads.length - before).toBe(1);
  });

  it('gives up after 3 tries of a lasting 5xx with one line', async () => {
    const before = discord.attachmentDownloads.length;
    discord.faultDownloads({ status: 502 }, { status: 502 }, { status: 502 });
    const request = withShot();
    const answer = await discord.waitForSent(replyTo(request), WAIT_MS);
    expect(answer.message.content).toBe(
      'Could not download shot.png: Discord failed to serve it (HTTP 502) (tried 3 times). Send it again.',
    );
    expect(discord.attachmentDownloads.length - before).toBe(3);
  });
});
