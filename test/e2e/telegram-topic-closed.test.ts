/**
 * A forum topic closed while a run works: Telegram refuses every send to it with 400
 * "Bad Request: TOPIC_CLOSED". The run's messages then go to the chat's General topic, after a
 * note that says why, instead of being dead-lettered without a word.
 */
import type { Update } from 'grammy/types';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir')] });
});
afterAll(async () => world?.dispose());

const FORUM = -1_005_001;
const TOPIC = 77;

function topicMessage(text: string, messageId: number): Update {
  const update = world.privateMessage(OWNER, text, messageId);
  const message = update.message as unknown as Record<string, unknown>;
  message['chat'] = { id: FORUM, type: 'supergroup', title: 'forum', is_forum: true };
  message['is_topic_message'] = true;
  message['message_thread_id'] = TOPIC;
  return update;
}

describe('a closed forum topic', () => {
  it("sends the run's messages to the General topic, with a note, instead of dead-lettering them", async () => {
    const { telegram, openai } = world;
    openai.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 2' } },
      { kind: 'message', text: 'Answer for a closed topic.' },
    );
    telegram.pushUpdate(topicMessage('/codex slow one', 500));
    const started = await telegram.waitForSent(
      (m) => Number(m.chat_id) === FORUM && m.text.includes('] started'),
      WAIT_MS,
    );
    expect(started.message_thread_id).toBe(TOPIC);
    const runId = runIdOf(started.text);
    telegram.closeTopic(FORUM, TOPIC);
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] completed`), WAIT_MS);
    expect(Number(outcome.chat_id)).toBe(FORUM);
    expect(outcome.message_thread_id).toBeUndefined();
    expect(outcome.text).toContain('Answer for a closed topic.');
    const note = telegram.sent.find(
      (m) => Number(m.chat_id) === FORUM && m.message_thread_id === undefined && m.text.includes('closed'),
    );
    expect(note?.text).toBe(
      `[run ${runId}] The forum topic this conversation is in is closed, so its messages come here, to the General topic.`,
    );
    expect(telegram.sent.indexOf(note!)).toBeLessThan(telegram.sent.indexOf(outcome));
    expect(telegram.calls.filter((c) => c.method === 'sendMessage' && c.status === 400).length).toBeGreaterThanOrEqual(
      1,
    );
  }, 120_000);
});
