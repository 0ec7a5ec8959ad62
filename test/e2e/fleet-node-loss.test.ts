/**
 * A node that stops answering (issue #16 item 4), through `baton start` on PostgreSQL: node alpha
 * runs a real codex run whose tool sleeps; alpha is frozen with SIGSTOP (alive, but silent, as a
 * host cut off from the database is); node beta declares it lost, ends the run
 * `interrupted · node_lost` and delivers the outcome. When alpha is let go again (SIGCONT), it
 * stops the run's processes and sends nothing more about it.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { startService, type ServiceProcess } from '../support/service.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';
import { waitFor } from '../support/wait.js';

const onPostgres = Boolean(process.env.DATABASE_URL);
// dead_after well above the heartbeat: only the frozen node is lost, not one whose event loop
// stalls a few seconds on a loaded machine.
const NODE = (name: string): string => `[node]\nname = "${name}"\nheartbeat_seconds = 1\ndead_after_seconds = 10`;

describe.runIf(onPostgres)('a lost node', () => {
  let world: TelegramE2E;
  let beta: ServiceProcess | undefined;
  let frozen: number | undefined;

  beforeAll(async () => {
    world = await startTelegramE2E({
      binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
      harnessToml: NODE('alpha'),
    });
    const home = join(world.dir, 'baton-home-beta');
    await mkdir(home, { recursive: true });
    const config = await readFile(join(world.batonHome, 'config.toml'), 'utf8');
    await writeFile(join(home, 'config.toml'), config.replace('name = "alpha"', 'name = "beta"'));
    beta = await startService({ ...world.env, BATON_HOME: home });
  }, 240_000);

  afterAll(async () => {
    if (frozen !== undefined) process.kill(frozen, 'SIGCONT');
    await beta?.stop();
    await world?.dispose();
  });

  it('is declared lost by another node, which ends its run node_lost; back, it stops the run and says nothing more', async () => {
    const { telegram, openai } = world;
    openai.enqueue({
      kind: 'tool_call',
      name: 'exec_command',
      arguments: { cmd: 'sleep 600.4217', yield_time_ms: 30_000 },
    });
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex wait a long time', 10));
    const started = await telegram.waitForSent((m) => replyTarget(m) === 10 && m.text.includes('] started'), WAIT_MS);
    const runId = runIdOf(started.text);
    await waitFor(async () => (await findRunProcesses(runId)).length > 0, {
      timeoutMs: 120_000,
      what: 'the run has processes',
      intervalMs: 200,
    });
    await openai.waitForRequest((r) => r.path === '/v1/responses', WAIT_MS);

    frozen = world.service.pid;
    process.kill(frozen, 'SIGSTOP');
    const outcome = await telegram.waitForSent((m) => m.text.startsWith(`[run ${runId}] interrupted`), WAIT_MS * 2);
    expect(outcome.text).toContain('Reason: node_lost');
    expect(outcome.text).toMatch(/Node alpha \(.*\) stopped answering/);
    // The run's processes still live on the frozen node.
    expect((await findRunProcesses(runId)).length).toBeGreaterThan(0);

    process.kill(frozen, 'SIGCONT');
    frozen = undefined;
    await waitFor(async () => (await findRunProcesses(runId)).length === 0, {
      timeoutMs: 120_000,
      what: 'the returning node stops the run',
      intervalMs: 200,
    });
    // Give the returning node time to have written anything it would write about the run.
    await sleep(3_000);
    expect(
      telegram.sent.filter((m) => m.text.startsWith(`[run ${runId}]`) && !m.text.includes('] started')),
    ).toHaveLength(1);
  }, 300_000);
});
