/**
 * Screenshots and files from Telegram (issue #13) through `baton start`: the real grammY client
 * downloads them from the fake Bot API (`getFile` + the file path), the real codex and claude
 * CLIs send them to the fake model servers, all on 127.0.0.1.
 */
import type { Update } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall } from '../fakes/fake-anthropic.js';
import {
  OWNER,
  GUEST,
  WAIT_MS,
  replyTarget,
  runIdOf,
  startTelegramE2E,
  type TelegramE2E,
} from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

/** A valid 1×1 PNG (codex decodes images and drops broken ones). */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
});
afterAll(async () => world?.dispose());

/** A photo message (Telegram sends several sizes, smallest first) with an optional caption. */
function photoMessage(userId: number, messageId: number, bytes: Buffer, caption?: string): Update {
  const update = world.privateMessage(userId, caption ?? 'x', messageId);
  const message = update.message as unknown as Record<string, unknown>;
  delete message['text'];
  delete message['entities'];
  const file = world.telegram.addFile(bytes);
  const thumb = world.telegram.addFile(Buffer.from('not the one'));
  message['photo'] = [
    { ...thumb, width: 1, height: 1 },
    { ...file, width: 1, height: 1 },
  ];
  if (caption !== undefined) {
    message['caption'] = caption;
    if (caption.startsWith('/'))
      message['caption_entities'] = [{ type: 'bot_command', offset: 0, length: caption.split(' ')[0]!.length }];
  }
  return update;
}

function documentMessage(userId: number, messageId: number, bytes: Buffer, fileName: string): Update {
  const update = world.privateMessage(userId, 'x', messageId);
  const message = update.message as unknown as Record<string, unknown>;
  delete message['text'];
  delete message['entities'];
  message['document'] = { ...world.telegram.addFile(bytes), file_name: fileName, mime_type: 'text/plain' };
  return update;
}

describe('Telegram attachments', () => {
  it('a photo captioned /codex reaches the model as an image, and started names it', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'I see the layout bug.' });
    const before = openai.requests.length;
    telegram.pushUpdate(photoMessage(OWNER, 10, PNG, '/codex fix the layout bug shown in this screenshot'));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toMatch(new RegExp(`started · codex · \\S+ · with photo-10\\.jpg \\(${PNG.length} B\\)$`));
    const done = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`),
      WAIT_MS,
    );
    expect(done.text).toContain('I see the layout bug.');
    const sent = JSON.stringify(openai.requests.slice(before).map((r) => r.body));
    expect(
      sent.includes(`data:image/png;base64,${PNG.toString('base64')}`),
      'image bytes in the Responses request',
    ).toBe(true);
  });

  it('a stalled getFile is cut by its deadline and tried again', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'Seen after the retry.' });
    const getFiles = (): number => telegram.calls.filter((c) => c.method === 'getFile').length;
    const before = getFiles();
    // Telegram answers this getFile only after two minutes: only baton's own deadline ends the try.
    telegram.stallNext('getFile', 120_000);
    telegram.pushUpdate(photoMessage(OWNER, 13, PNG, '/codex look at this'));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 13 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toContain('with photo-13.jpg');
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    expect(getFiles() - before).toBe(2);
  });

  it('/stop is answered while a launch waits on a stalled getFile, and stops that launch too', async () => {
    const { telegram } = world;
    const getFiles = (): number => telegram.calls.filter((c) => c.method === 'getFile').length;
    const before = getFiles();
    // Telegram answers this getFile only after two minutes: only baton's own deadline ends the try.
    telegram.stallNext('getFile', 120_000);
    telegram.pushUpdate(photoMessage(OWNER, 15, PNG, '/codex look at this'));
    for (let i = 0; i < 6000 && getFiles() === before; i++) await new Promise((r) => setTimeout(r, 10));
    telegram.pushUpdate(world.privateMessage(OWNER, '/stop', 16));
    const stopped = await telegram.waitForSent((m) => replyTarget(m) === 16, WAIT_MS);
    expect(stopped.text).toBe('Stopped 0 active runs. Stopped 1 launch still downloading its files.');
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 15, WAIT_MS);
    expect(answer.text).toBe(
      'Stopped before it started: /stop came while its files were downloading. Send the command again to run it.',
    );
    expect(getFiles() - before).toBe(1);
  });

  it('an album of three photos captioned /codex is one launch with all three; the next /codex gets none', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'Three screenshots seen.' });
    const album = (messageId: number, caption?: string): Update => {
      const update = photoMessage(OWNER, messageId, PNG, caption);
      (update.message as unknown as Record<string, unknown>)['media_group_id'] = '13911';
      return update;
    };
    // Telegram sends an album as one update per photo; they may come in different polls.
    telegram.pushUpdate(album(140, '/codex compare these three screenshots'));
    await waitFor(() => telegram.pendingUpdates() === 0, {
      what: 'the updates to be fetched',
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    telegram.pushUpdate(album(141));
    await waitFor(() => telegram.pendingUpdates() === 0, {
      what: 'the updates to be fetched',
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    telegram.pushUpdate(album(142));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 140 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toMatch(/with photo-140\.jpg \(\d+ B\), photo-141\.jpg \(\d+ B\), photo-142\.jpg \(\d+ B\)$/);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    expect(telegram.sent.filter((m) => replyTarget(m) === 141 || replyTarget(m) === 142)).toEqual([]);
    openai.enqueue({ kind: 'message', text: 'Nothing attached.' });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex an unrelated task', 143));
    const next = await telegram.waitForSent((m) => replyTarget(m) === 143 && m.text.includes('] started'), WAIT_MS);
    expect(next.text).not.toContain(' with ');
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(next.text)}] completed`), WAIT_MS);
  });

  it('a photo alone is held and goes with the next /claude, as an image block', async () => {
    const { telegram, anthropic } = world;
    telegram.pushUpdate(photoMessage(OWNER, 20, PNG));
    const held = await telegram.waitForSent((m) => replyTarget(m) === 20, WAIT_MS);
    expect(held.text).toMatch(/^Got it — it goes with your next \/codex or \/claude/);
    anthropic.enqueue({ kind: 'message', text: 'Claude sees it.' });
    const before = anthropic.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, '/claude what is wrong in the screenshot', 21));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 21 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toContain('· with photo-20.jpg');
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    const call = anthropic.requests.slice(before).filter(isMessagesCall).at(-1);
    expect(
      JSON.stringify(call?.body).includes(`"data":"${PNG.toString('base64')}"`),
      'image block in the Messages request',
    ).toBe(true);
  });

  it('a text document becomes part of the task', async () => {
    const { telegram, openai } = world;
    telegram.pushUpdate(documentMessage(OWNER, 30, Buffer.from('Error: the build fails on line 12\n'), 'build.log'));
    await telegram.waitForSent((m) => replyTarget(m) === 30, WAIT_MS);
    openai.enqueue({ kind: 'message', text: 'Read the log.' });
    const before = openai.requests.length;
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex why does the build fail', 31));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 31 && m.text.includes('] started'), WAIT_MS);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    const sent = JSON.stringify(openai.requests.slice(before).map((r) => r.body));
    expect(
      sent.includes('--- Attached file: build.log ---\\nError: the build fails on line 12'),
      'file in the task',
    ).toBe(true);
  });

  it('a voice note while [voice] is off is answered with how to turn it on, and not downloaded', async () => {
    const { telegram } = world;
    const update = world.privateMessage(OWNER, 'x', 45);
    const message = update.message as unknown as Record<string, unknown>;
    delete message['text'];
    message['voice'] = { ...telegram.addFile(Buffer.from('OggS')), duration: 2, mime_type: 'audio/ogg' };
    const before = telegram.calls.filter((c) => c.method === 'getFile').length;
    telegram.pushUpdate(update);
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 45, WAIT_MS);
    expect(answer.text).toMatch(/^Voice notes are off: add a \[voice\] table .*docs\/voice\.md/);
    expect(telegram.calls.filter((c) => c.method === 'getFile').length).toBe(before);
  });

  it('a guest’s photo is never downloaded', async () => {
    const { telegram } = world;
    const downloads = () => telegram.calls.filter((c) => c.method === 'getFile').length;
    const before = downloads();
    telegram.pushUpdate(photoMessage(GUEST, 40, PNG, '/codex look at this'));
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 40, WAIT_MS);
    expect(answer.text).toBe('Coding runs are available to the owner only.');
    expect(downloads()).toBe(before);
  });

  it('a file over max_attachment_mb is refused by name before any download', async () => {
    const { telegram } = world;
    const update = photoMessage(OWNER, 50, PNG, '/codex look at this huge one');
    const photos = (update.message as unknown as { photo: { file_size: number }[] }).photo;
    photos.at(-1)!.file_size = 25 * 1024 * 1024;
    const downloads = telegram.calls.filter((c) => c.method === 'getFile').length;
    telegram.pushUpdate(update);
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 50, WAIT_MS);
    expect(answer.text).toMatch(/^photo-50\.jpg is larger than 20\.0 MB \(\[harness\] max_attachment_mb\)/);
    expect(telegram.calls.filter((c) => c.method === 'getFile').length).toBe(downloads);
  });
  it('an image over max_image_pixels is refused by name and size before any CLI sees it', async () => {
    const { telegram, openai } = world;
    // Signature and IHDR only: a few dozen bytes that say 20000×20000.
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(20_000, 0);
    ihdr.writeUInt32BE(20_000, 4);
    ihdr.set([8, 6, 0, 0, 0], 8);
    const huge = Buffer.concat([
      PNG.subarray(0, 8),
      Buffer.from([0, 0, 0, 13]),
      Buffer.from('IHDR'),
      ihdr,
      PNG.subarray(29),
    ]);
    const before = openai.requests.length;
    telegram.pushUpdate(photoMessage(OWNER, 55, huge, '/codex look at this wide one'));
    const answer = await telegram.waitForSent((m) => replyTarget(m) === 55, WAIT_MS);
    expect(answer.text).toBe(
      'photo-55.jpg is 20000×20000 pixels (400 megapixels), more than [harness] max_image_pixels allows (50 megapixels), so it cannot go with the task. Scale it down (or crop it) and send it again.',
    );
    expect(openai.requests.length).toBe(before);
    expect(telegram.sent.some((m) => replyTarget(m) === 55 && m.text.includes('] started'))).toBe(false);
  });

  it('retries a getFile that failed on Telegram’s side, and answers an expired or too large file in one line (issue #13 item 3)', async () => {
    const { telegram, openai } = world;
    openai.setFallback(() => ({ kind: 'message', text: 'Looked at it.' }));
    const getFiles = (): number => telegram.calls.filter((c) => c.method === 'getFile').length;
    let before = getFiles();
    telegram.failNext('getFile', { status: 500 });
    telegram.pushUpdate(photoMessage(OWNER, 60, PNG, '/codex look again'));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 60 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toContain('with photo-60.jpg');
    expect(getFiles() - before).toBe(2);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);

    const permanent: [number, string, string][] = [
      [
        61,
        'Bad Request: wrong file_id or the file is temporarily unavailable',
        'Could not download photo-61.jpg: Telegram no longer knows the file (its file reference expired). Send it again.',
      ],
      [
        62,
        'Bad Request: file is too big',
        'Could not download photo-62.jpg: Telegram lets bots download files of at most 20 MB. Send a smaller file, or put it in the repository.',
      ],
    ];
    for (const [messageId, description, answerText] of permanent) {
      before = getFiles();
      telegram.failNext('getFile', { status: 400, body: { ok: false, error_code: 400, description } });
      telegram.pushUpdate(photoMessage(OWNER, messageId, PNG, '/codex look at this'));
      const answer = await telegram.waitForSent((m) => replyTarget(m) === messageId, WAIT_MS);
      expect(answer.text).toBe(answerText);
      expect(getFiles() - before).toBe(1);
    }
  });
});
