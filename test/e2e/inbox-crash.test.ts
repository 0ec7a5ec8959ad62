/**
 * Inbound is at-least-once across a crash (issue #10 item 2), through `baton start` and the real
 * grammY runner: the service is killed with SIGKILL at the moment its next `getUpdates` confirms
 * the updates it just fetched (Telegram forgets them then). After the restart every one of them
 * is answered, and a launch still starts one run at most.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
});
afterAll(async () => world?.dispose());

describe('inbox across kill -9', () => {
  it('answers every update fetched by a process killed before it handled them; no second run', async () => {
    const { telegram, openai } = world;
    openai.setFallback(() => ({ kind: 'message', text: 'Done.' }));
    const cycles = 5;
    let messageId = 1_000;
    for (let cycle = 0; cycle < cycles; cycle++) {
      const askId = messageId++;
      const launchId = messageId++;
      const pid = world.service.pid;
      const ids = telegram.batch(() => [
        telegram.pushUpdate(world.privateMessage(OWNER, '/whoami', askId)),
        telegram.pushUpdate(world.privateMessage(OWNER, `/codex cycle ${cycle}`, launchId)),
      ]);
      await new Promise<void>((resolve) =>
        telegram.onConfirm(Math.max(...ids), () => {
          process.kill(pid, 'SIGKILL');
          resolve();
        }),
      );
      await world.crashAndRestart(); // reaps the killed process and starts the service again

      const answer = await telegram.waitForSent((m) => replyTarget(m) === askId, WAIT_MS);
      expect(answer.text).toContain(`Your telegram user id: ${OWNER}`);
      const started = await telegram.waitForSent(
        (m) => replyTarget(m) === launchId && m.text.includes('] started'),
        WAIT_MS,
      );
      const runId = runIdOf(started.text);
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started'), WAIT_MS);
      expect(telegram.sent.filter((m) => replyTarget(m) === launchId && m.text.includes('] started'))).toHaveLength(1);
    }
  }, 600_000);
});
