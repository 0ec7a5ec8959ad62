/**
 * The README's order: `npm start`, then the terminal commands while the service runs. With
 * embedded PGlite only the service may open the database, so `ask`, `runs`, `cancel`, `stop` and
 * `doctor` reach it through its local admin port; with PostgreSQL they open the database too.
 */
import { execa } from 'execa';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { CLI, makeCliHome, reapOnTestEnd, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';
import { startService, type ServiceProcess } from '../support/service.js';
import { testEngine } from '../support/database.js';
import { blockOn, firstRunId, startAsk, until } from '../support/ask-queue.js';

let model: FakeOpenAI;
let home: CliHome;
let service: ServiceProcess;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(
    join((await import('node:os')).tmpdir(), `beside-codex-${process.pid}`),
    model.url,
  );
  home = await makeCliHome({
    binDirs: [inject('codexBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}`,
  });
  service = await startService(home.env);
});
afterAll(async () => {
  await service?.stop();
  await home?.dispose();
  await model?.close();
});

describe(`terminal commands while the service runs (${testEngine})`, () => {
  it('baton ask completes a run and prints its outcome', async () => {
    model.enqueue({ kind: 'message', text: 'Answered beside the service.' });
    const result = await home.baton(['ask', 'say something']);
    expect(result.stderr).not.toMatch(/in use/);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toMatch(new RegExp(`^\\[run hr_[0-9a-f]{12}\\] started · codex · ${home.repo}$`, 'm'));
    expect(result.stdout).toMatch(/\[run hr_[0-9a-f]{12}\] completed · codex · /);
    expect(result.stdout).toContain('Answered beside the service.');
  });

  it('baton ask --json reports the run, and a refusal exits 2 with the fix', async () => {
    model.enqueue({ kind: 'message', text: 'json answer' });
    const json = await home.baton(['ask', '--json', 'answer in json']);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'completed',
      finalMessage: 'json answer',
      vendor: 'codex',
    });
    const refused = await home.baton(['ask', '--cwd', '/usr', 'anything']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stdout).toMatch(/^\/usr is outside the workspace/);
  });

  it('baton runs, doctor, cancel and stop work, and cancel ends a running ask', async ({ signal: testEnded }) => {
    const runs = await home.baton(['runs']);
    expect(runs.exitCode).toBe(0);
    expect(runs.stdout).toMatch(/hr_[0-9a-f]{12}/);
    const doctor = await home.baton(['doctor']);
    expect(doctor.exitCode).toBe(0);
    expect(doctor.stdout).not.toMatch(/unusable/);

    model.enqueue({ kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 } });
    const asking = execa(process.execPath, [CLI, 'ask', 'wait forever'], {
      env: home.env,
      extendEnv: false,
      cwd: home.repo,
      reject: false,
      stdin: 'ignore',
    });
    reapOnTestEnd(asking, asking);
    let out = '';
    asking.stdout?.on('data', (c: Buffer) => (out += c.toString()));
    while (!/\[run hr_[0-9a-f]{12}\] started/.test(out)) {
      if (testEnded.aborted) throw new Error(`no start line: ${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const runId = /hr_[0-9a-f]{12}/.exec(out)![0];
    // Cancelled once its CLI has taken the turn queued for it: a turn left queued would answer
    // the next test's first request.
    await model.waitForRequest((r) => JSON.stringify(r.body).includes('wait forever'), 60_000);
    const cancel = await home.baton(['cancel', runId]);
    expect(cancel.stdout).toMatch(/cancel/);
    expect(cancel.exitCode).toBe(0);
    const ended = await asking;
    expect(ended.exitCode).toBe(130);
    expect(String(ended.stdout)).toContain(`[run ${runId}] cancelled`);

    const stop = await home.baton(['stop']);
    expect(stop.exitCode).toBe(0);
    expect(stop.stdout).toMatch(/(Stopping|Stopped) 0 active runs/);
  });

  it('a second ask in a busy checkout waits for its turn and prints its outcome; the service starts a --no-wait run', async ({
    signal,
  }) => {
    blockOn(model, 'QUEUEBLOCKER');
    const blocker = startAsk(home, ['QUEUEBLOCKER hold the checkout']);
    await until(() => firstRunId(blocker.out()) !== undefined, signal);
    const blockerId = firstRunId(blocker.out())!;
    await model.waitForRequest((r) => JSON.stringify(r.body).includes('QUEUEBLOCKER'), 60_000);

    const second = startAsk(home, ['the queued task']);
    await until(() => / queued behind /.test(second.out()), signal);
    const secondId = firstRunId(second.out())!;
    const noWait = await home.baton(['ask', '--no-wait', 'the task not waited for']);
    expect(noWait.exitCode, noWait.stdout + noWait.stderr).toBe(0);
    const noWaitId = firstRunId(noWait.stdout)!;
    expect(noWait.stdout).toContain(
      `Not waiting (--no-wait). The running baton service starts it when its turn comes. Follow it with baton runs ${noWaitId}; drop it with baton cancel ${noWaitId}.`,
    );
    expect(second.child.exitCode).toBeNull(); // waiting, not failed

    expect((await home.baton(['cancel', blockerId])).exitCode).toBe(0);
    expect((await blocker.child).exitCode).toBe(130);
    const ended = await second.child;
    expect(ended.exitCode, ended.stdout + ended.stderr).toBe(0);
    expect(String(ended.stdout)).toMatch(new RegExp(`\\[run ${secondId}\\] completed · codex · `));
    // The service starts the run nobody waits for, when its turn comes.
    await until(
      async () => /^\[run hr_[0-9a-f]{12}\] completed/.test((await home.baton(['runs', noWaitId])).stdout),
      signal,
    );
  }, 240_000);
});
