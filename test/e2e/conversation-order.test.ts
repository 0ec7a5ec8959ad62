/**
 * One conversation, one order (issue #10 item 1): updates of one chat that arrive in one
 * `getUpdates` answer are handled strictly in arrival order, through `baton start` and the real
 * grammY runner, so `/codex …` then `/stop` stops that run and `/use B` then `/codex …` runs in B.
 */
import { execa } from 'execa';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;
let repoB: string;
let nextMessageId = 100;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
  repoB = join(world.root, 'repo-b');
  await mkdir(repoB, { recursive: true });
  await execa('git', ['init', '-q', repoB]);
});
afterAll(async () => world?.dispose());

describe('one conversation, one order (Telegram)', () => {
  it('/codex then /stop in one getUpdates answer: the run is stopped and the answer says 1', async () => {
    const { telegram, openai } = world;
    // A fallback, not a queued turn: the run may be stopped before it ever asks the model.
    openai.setFallback(() => ({
      kind: 'tool_call',
      name: 'exec_command',
      arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 },
    }));
    const launchId = nextMessageId++;
    const stopId = nextMessageId++;
    telegram.batch(() => {
      telegram.pushUpdate(world.privateMessage(OWNER, '/codex a long task', launchId));
      telegram.pushUpdate(world.privateMessage(OWNER, '/stop', stopId));
    });
    const stopAnswer = await telegram.waitForSent((m) => replyTarget(m) === stopId, WAIT_MS);
    expect(stopAnswer.text).toBe('Stopped 1 active run.');
    const started = await telegram.waitForSent(
      (m) => replyTarget(m) === launchId && m.text.includes('] started'),
      WAIT_MS,
    );
    const outcome = await telegram.waitForSent(
      (m) => m.text.startsWith(`[run ${runIdOf(started.text)}] `) && !m.text.includes('] started'),
      WAIT_MS,
    );
    expect(outcome.text).toMatch(/^\[run hr_[0-9a-f]{12}\] cancelled/);
  }, 120_000);

  it('/use then /codex in one getUpdates answer: every run starts where /use pointed', async () => {
    const { telegram, openai } = world;
    openai.setFallback(() => ({ kind: 'message', text: 'Here.' }));
    // Alternate so that a run in the wrong directory shows up whichever default was left over.
    for (const target of [repoB, world.repo, repoB, world.repo]) {
      const useId = nextMessageId++;
      const launchId = nextMessageId++;
      telegram.batch(() => {
        telegram.pushUpdate(world.privateMessage(OWNER, `/use ${target}`, useId));
        telegram.pushUpdate(world.privateMessage(OWNER, '/codex where am i', launchId));
      });
      const started = await telegram.waitForSent((m) => replyTarget(m) === launchId, WAIT_MS);
      expect(started.text).toMatch(/^\[run hr_[0-9a-f]{12}\] started · codex · /);
      expect(started.text.endsWith(` · ${target}`)).toBe(true);
      await telegram.waitForSent((m) => m.text.startsWith(`[run ${runIdOf(started.text)}] completed`), WAIT_MS);
    }
  }, 240_000);
});
