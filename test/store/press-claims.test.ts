import { beforeAll, describe, expect, it } from 'vitest';
import { PressClaims } from '../../src/store/press-claims.js';
import { useTestDatabase, testEngine } from '../support/database.js';

const now = new Date('2026-12-01T08:00:00.000Z');

describe(`PressClaims on ${testEngine}`, () => {
  const database = useTestDatabase();
  let claims: PressClaims;
  beforeAll(async () => {
    claims = new PressClaims(database.db);
  });

  it('two presses of one message at once: exactly one claims it; the other sees its answer once recorded', async () => {
    const message = { platform: 'telegram', chatId: '1', messageId: '42' };
    const press = { action: 'resume', arg: 'hr_0123456789ab', pressedBy: 'telegram:1' };
    const results = await Promise.all([claims.claim(message, press, now), claims.claim(message, press, now)]);
    expect(results.filter((r) => r === undefined)).toHaveLength(1);
    await claims.answered(message, 'Resuming as hr_aaaaaaaaaaaa.');
    expect(await claims.claim(message, press, now)).toMatchObject({
      answer: 'Resuming as hr_aaaaaaaaaaaa.',
      pressedBy: 'telegram:1',
    });
    // Another message of the same chat is its own.
    expect(await claims.claim({ ...message, messageId: '43' }, press, now)).toBeUndefined();
  });

  it('a released claim (the action was refused) lets a later press act', async () => {
    const message = { platform: 'slack', chatId: 'C1', messageId: '1700000000.000100' };
    const press = { action: 'resume', arg: 'hr_0123456789ab', pressedBy: 'slack:U1' };
    expect(await claims.claim(message, press, now)).toBeUndefined();
    await claims.release(message);
    expect(await claims.claim(message, press, now)).toBeUndefined();
  });
});
