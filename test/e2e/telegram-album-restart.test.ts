/**
 * An album whose parts straddle a crash: two photos arrive and are confirmed to Telegram, baton
 * is killed before the album's wait ends, the third photo comes after the restart. The inbox kept
 * the first two (unclaimed), so the restarted baton collects all three into one launch.
 */
import type { Update } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

let world: TelegramE2E;

// A long wait for the next part, so the crash surely falls inside it.
beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir')], harnessToml: 'paste_join_ms = 15000' });
});
afterAll(async () => world?.dispose());

function albumPart(messageId: number, caption?: string): Update {
  const update = world.privateMessage(OWNER, caption ?? 'x', messageId);
  const message = update.message as unknown as Record<string, unknown>;
  delete message['text'];
  delete message['entities'];
  message['photo'] = [{ ...world.telegram.addFile(PNG), width: 1, height: 1 }];
  message['media_group_id'] = '77001';
  if (caption !== undefined) {
    message['caption'] = caption;
    message['caption_entities'] = [{ type: 'bot_command', offset: 0, length: caption.split(' ')[0]!.length }];
  }
  return update;
}

describe('an album across a restart', () => {
  it('is still one launch with all its photos', async () => {
    const { telegram, openai } = world;
    openai.enqueue({ kind: 'message', text: 'All three.' });
    telegram.pushUpdate(albumPart(60, '/codex what do these show'));
    telegram.pushUpdate(albumPart(61));
    // Confirmed to Telegram (the next poll's offset), so stored in the inbox.
    await waitFor(() => telegram.pendingUpdates() === 0, {
      what: 'the updates to be fetched',
      timeoutMs: 60_000,
      intervalMs: 10,
    });
    await world.crashAndRestart();
    telegram.pushUpdate(albumPart(62));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 60 && m.text.includes('] started'), WAIT_MS);
    expect(started.text).toMatch(/with photo-60\.jpg \(\d+ B\), photo-61\.jpg \(\d+ B\), photo-62\.jpg \(\d+ B\)$/);
    await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    expect(telegram.sent.filter((m) => replyTarget(m) === 61 || replyTarget(m) === 62)).toEqual([]);
  }, 180_000);
});
