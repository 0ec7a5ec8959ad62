/**
 * The shared secret check of every end-to-end service (test/support/canaries.ts) is live: a run's
 * fake CLI records the environment baton gave it, and none of the canaries shows there; a secret
 * that reaches a file under $BATON_HOME fails the service's stop, naming the variable and the file.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeTelegram, type FakeTelegram } from '../fakes/fake-telegram.js';
import { childEnvLog } from '../support/canaries.js';
import { WAIT_MS, startChatE2E, type ChatE2E } from '../support/chat-e2e.js';
import { ANTHROPIC_KEY_CANARY } from '../support/home.js';

const TOKEN = '123456:canary-token-for-the-secret-check';
const OWNER = 111;

let telegram: FakeTelegram;
let world: ChatE2E;
beforeAll(async () => {
  telegram = await startFakeTelegram({ token: TOKEN });
  world = await startChatE2E({
    trust: { telegram: { owner: String(OWNER) } },
    env: { TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_ROOT: telegram.url },
  });
}, 120_000);
afterAll(async () => {
  await world?.dispose();
  await telegram?.close();
});

describe('the secret check every E2E service passes', () => {
  it("sees the environment of a run's CLI, which holds no secret of the service", async () => {
    telegram.pushMessage({ chatId: OWNER, from: { id: OWNER }, text: '/codex say hello' });
    await telegram.waitForSent((m) => / completed · /.test(m.text), WAIT_MS);
    const envs = (await readFile(childEnvLog(world.batonHome), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(envs.some((env) => env.BATON_RUN_ID?.startsWith('hr_'))).toBe(true);
    const all = JSON.stringify(envs);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(ANTHROPIC_KEY_CANARY);
  });

  it('fails the stop when a secret reached a file under $BATON_HOME, naming the variable and the file', async () => {
    const leak = join(world.batonHome, 'harness', 'leaked.txt');
    await writeFile(leak, `request to http://api/bot${TOKEN}/getMe failed\n`);
    await expect(world.service.stop()).rejects.toThrow(/TELEGRAM_BOT_TOKEN in harness\/leaked\.txt/);
    await rm(leak);
    await world.service.stop(); // clean again once the leak is gone
  });
});
