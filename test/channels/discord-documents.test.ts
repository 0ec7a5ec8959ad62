/**
 * Files out on Discord (issue #13 item 2): the real DiscordAdapter (@discordjs/rest, multipart
 * `payload_json` + `files[0]`) against the fake Discord, driven by the real Outbox on a real
 * database: a long outcome goes as its first part plus result.md; a file Discord refuses (over
 * its 10 MiB default limit) gives way to the text parts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordAdapter, DISCORD_MAX_FILE_BYTES } from '../../src/channels/discord/adapter.js';
import { classifyDiscordError } from '../../src/channels/discord/errors.js';
import { ChannelSendError } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { Outbox } from '../../src/delivery/outbox.js';
import { splitMessage } from '../../src/delivery/split.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { DocumentJson } from '../../src/store/schema.js';
import { discordUser, startFakeDiscord, type FakeDiscord } from '../fakes/fake-discord.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const TOKEN = 'unit.discord-docs-token.value';
const DM = '300000000000000019';
const OWNER = discordUser('100000000000000011', 'owner');

let discord: FakeDiscord;
let adapter: DiscordAdapter;
const database = useTestDatabase();
let outbox: Outbox;
let store: RunStore;
let dir: string;

beforeAll(async () => {
  discord = await startFakeDiscord({ token: TOKEN });
  adapter = new DiscordAdapter({ token: TOKEN, apiUrl: discord.url, clock: systemClock, logger: silentLogger() });
  await adapter.start(async () => {});
  store = new RunStore(database.db);
  outbox = new Outbox({
    store,
    clock: systemClock,
    logger: silentLogger(),
    adapters: new Map([['discord', adapter]]),
    policy: { backoffBaseMs: 30_000, backoffCapMs: 1_800_000, maxAttempts: 5, maxAgeMs: 86_400_000 },
  });
  dir = await mkdtemp(join(tmpdir(), 'baton-discord-docs-'));
});

afterAll(async () => {
  await adapter?.stop();
  await discord?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function outcome(chars: number): string {
  const lines = Array.from({ length: Math.ceil(chars / 80) }, (_, i) => `answer line ${i + 1} ${'q'.repeat(60)}`);
  return ['[run hr_bbbbbbbbbbbb] completed · claude', '', ...lines].join('\n');
}

async function resultDocument(content: string | Buffer): Promise<DocumentJson> {
  const path = join(dir, `result-${Math.random().toString(36).slice(2)}.md`);
  await writeFile(path, content, { mode: 0o600 });
  return {
    path,
    filename: 'result.md',
    use: 'long_body',
    caption: '[run hr_bbbbbbbbbbbb] The whole answer: result.md',
  };
}

describe(`Discord files out (${testEngine})`, () => {
  it('sends a long outcome as its first part plus a message with result.md attached, replying to the request', async () => {
    const request = discord.pushMessage({ channelId: DM, author: OWNER, content: '/claude explain' });
    const body = outcome(9_000);
    expect(splitMessage(body, adapter.maxMessageLength).length).toBeGreaterThan(3);
    const before = discord.sent.length;
    await outbox.send({
      runId: null,
      kind: 'outcome',
      target: { platform: 'discord', chatId: DM, replyToMessageId: request.id },
      body,
      documents: [await resultDocument(body)],
    });
    const sent = discord.sent.slice(before);
    expect(sent).toHaveLength(2);
    expect(body.startsWith(sent[0]!.body.content as string)).toBe(true);
    expect(sent[1]!.files.map((f) => f.filename)).toEqual(['result.md']);
    expect(sent[1]!.files[0]!.content.toString('utf8')).toBe(body);
    expect(sent[1]!.body).toMatchObject({
      content: '[run hr_bbbbbbbbbbbb] The whole answer: result.md',
      message_reference: { message_id: request.id },
    });
    expect((sent[1]!.message.attachments as { filename: string; size: number }[])[0]).toMatchObject({
      filename: 'result.md',
      size: Buffer.byteLength(body),
    });
  });

  it('refuses a file over 10 MiB before sending it, and the outbox sends the text parts instead', async () => {
    const error = await adapter
      .sendDocument({ chatId: DM, filename: 'big.md', content: Buffer.alloc(DISCORD_MAX_FILE_BYTES + 1, 0x61) })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ChannelSendError);
    expect(error).toMatchObject({ kind: 'refused', retryable: false });
    const body = outcome(9_000);
    const before = discord.sent.length;
    const document = await resultDocument(Buffer.alloc(DISCORD_MAX_FILE_BYTES + 1, 0x61));
    await outbox.send({
      runId: null,
      kind: 'outcome',
      target: { platform: 'discord', chatId: DM },
      body,
      documents: [document],
    });
    const sent = discord.sent.slice(before);
    expect(sent.every((m) => m.files.length === 0)).toBe(true);
    expect(sent).toHaveLength(splitMessage(body, adapter.maxMessageLength).length);
  });
});

describe(`Discord refuses a file (${testEngine})`, () => {
  for (const refusal of [
    { status: 413, code: 40005 } as const,
    { status: 400, code: 50035 } as const,
    { status: 413, code: 40005, early: true } as const,
  ]) {
    it(`falls back to the text parts when Discord answers ${refusal.status} / ${refusal.code} to the file${'early' in refusal ? ' before reading it' : ''}`, async () => {
      const body = outcome(9_000);
      const before = discord.sent.length;
      discord.refuseNextFile(DM, { status: refusal.status, early: 'early' in refusal });
      // A big file, so the refusal comes while it is still being sent.
      const big = Buffer.concat([Buffer.from(body), Buffer.alloc(8 * 1024 * 1024, 0x61)]);
      const row = await store.outbox.enqueue(
        {
          runId: null,
          kind: 'outcome',
          target: { platform: 'discord', chatId: DM },
          body,
          documents: [await resultDocument(big)],
        },
        new Date(),
      );
      expect(await outbox.attempt(row)).toBe(true);
      const sent = discord.sent.slice(before);
      expect(sent.every((m) => m.files.length === 0)).toBe(true);
      expect(sent.map((m) => m.body.content).join('')).toContain(body.slice(-200));
      expect(sent).toHaveLength(splitMessage(body, adapter.maxMessageLength).length);
    });
  }

  it('a TypeError thrown inside the client library ("action is not a function") is refused, not retried as a network failure', () => {
    const error = classifyDiscordError(new TypeError('action is not a function'), 'create message', TOKEN);
    expect(error).toMatchObject({ kind: 'refused', retryable: false });
    // A network failure stays one.
    expect(classifyDiscordError(new TypeError('fetch failed'), 'create message', TOKEN)).toMatchObject({
      kind: 'network',
      retryable: true,
    });
  });
});
