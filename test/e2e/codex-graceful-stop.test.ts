/**
 * The owner's stop of a codex run through its app-server: codex is first asked to stop its turn
 * (`turn/interrupt`), ends it by itself, and the outcome says so; under `codex exec` (no session)
 * the run is killed at once, as before, and the outcome says nothing about asking.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

describe.each(['app-server', 'exec'] as const)('/cancel of a codex run (codex_transport = %s)', (transport) => {
  let world: TelegramE2E;
  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: `codex_transport = "${transport}"`,
    });
  });
  afterAll(async () => world?.dispose());

  it('stops the running command and ends the run cancelled, saying whether codex stopped by itself', async () => {
    world.openai.enqueue({
      kind: 'tool_call',
      name: 'exec_command',
      arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 },
    });
    world.telegram.pushUpdate(world.privateMessage(OWNER, '/codex sleep a while', 10));
    const started = await world.telegram.waitForSent(
      (m) => replyTarget(m) === 10 && m.text.includes('] started'),
      WAIT_MS,
    );
    const runId = runIdOf(started.text);
    await waitFor(
      async () => {
        const cmdlines = await Promise.all(
          (await findRunProcesses(runId)).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')),
        );
        return cmdlines.some((c) => c.includes('600'));
      },
      { what: "the run's sleep 600 tool", intervalMs: 50 },
    );
    world.telegram.pushUpdate(world.privateMessage(OWNER, `/cancel ${runId}`, 11));
    const cancelled = await world.telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] cancelled`), WAIT_MS);
    expect(cancelled.text).toContain('Nothing will be relaunched.');
    expect(await findRunProcesses(runId)).toEqual([]);
    const events = (await world.eventsOf(runId)) as { method?: string; params?: { turn?: { status?: string } } }[];
    if (transport === 'app-server') {
      expect(cancelled.text).toContain('Asked to stop, the agent stopped by itself.');
      expect(events.some((e) => e.method === 'turn/completed' && e.params?.turn?.status === 'interrupted')).toBe(true);
    } else {
      expect(cancelled.text).not.toContain('Asked to stop');
    }
  });
});
