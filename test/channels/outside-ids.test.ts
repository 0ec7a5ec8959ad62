/**
 * Numbers from chat for rows baton numbers itself: an id no row can have (past bigint, past a
 * safe integer, zero) is answered like any unknown id, never thrown back to the inbox (which would
 * retry it every 10 s for ever). The real store on PGlite or PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundPress } from '../../src/channels/types.js';
import { createHarness, inbound, type TestHarness } from '../support/harness.js';

let h: TestHarness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => h?.dispose());

const HUGE = '9'.repeat(40);

function press(action: string, arg: string): InboundPress & { answers: string[] } {
  const answers: string[] = [];
  return {
    platform: 'telegram',
    dedupeKey: `press-${action}-${arg.length}-${Math.random()}`,
    chatId: '1',
    messageId: '5',
    senderId: '1',
    isDirect: true,
    action,
    arg,
    receivedAt: new Date(),
    answers,
    answer: async (text) => void answers.push(text),
  };
}

describe('ids from outside', () => {
  it.each([HUGE, '9223372036854775808', '9007199254740993', '0'])(
    'answers /redeliver %s as no dead letter',
    async (id) => {
      const sent = h.channel.sent.length;
      await expect(h.dispatcher.handle(inbound('1', `/redeliver ${id}`))).resolves.toMatchObject({ kind: 'answered' });
      const answer = h.channel.sent
        .slice(sent)
        .map((m) => m.text)
        .join('\n');
      expect(answer).toMatch(/is not a dead letter \(see \/runs for the list\)\.$/);
      expect(answer.length).toBeLessThan(100);
    },
  );

  it.each(['redeliver', 'allow', 'allow_run', 'deny'])(
    'answers a pressed %s button with an id past bigint',
    async (action) => {
      const pressed = press(action, HUGE);
      await expect(h.dispatcher.handlePress(pressed)).resolves.toBeDefined();
      expect(pressed.answers).toHaveLength(1);
      expect(pressed.answers[0]).toMatch(/not a dead letter|not known here/);
    },
  );
});
