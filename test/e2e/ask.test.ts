/**
 * `baton ask`, the terminal channel, end to end: the built CLI, the real codex CLI, the fake
 * Responses API on 127.0.0.1.
 */
import { execa } from 'execa';
import { readFile } from 'node:fs/promises';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { CLI, makeCliHome, reapOnTestEnd, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let model: FakeOpenAI;
let home: CliHome;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(join((await import('node:os')).tmpdir(), `ask-codex-${process.pid}`), model.url);
  home = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: `codex_home = ${JSON.stringify(codexHome)}` });
});
afterAll(async () => {
  await home?.dispose();
  await model?.close();
});

describe('baton ask', () => {
  it('runs a task in the current directory, prints started and the outcome, exits 0', async () => {
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'printf asked > asked.txt' } },
      { kind: 'message', text: 'Wrote asked.txt from the terminal.' },
    );
    const result = await home.baton(['ask', 'write asked.txt']);
    expect(result.exitCode).toBe(0);
    const lines = String(result.stdout).split('\n');
    expect(lines[0]).toMatch(new RegExp(`^\\[run hr_[0-9a-f]{12}\\] started · codex · ${home.repo}$`));
    expect(String(result.stdout)).toMatch(/\[run hr_[0-9a-f]{12}\] completed · codex · /);
    expect(String(result.stdout)).toContain('Wrote asked.txt from the terminal.');
    expect(await readFile(join(home.repo, 'asked.txt'), 'utf8')).toBe('asked');
  });

  it('exits non-zero with the vendor words when the model fails, and --json carries them', async () => {
    model.enqueue({ kind: 'http_error', status: 401 });
    const result = await home.baton(['ask', '--json', 'this fails']);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(String(result.stdout)) as { status: string; reason: string; errorMessage: string; messages: string[] };
    expect(report).toMatchObject({ status: 'failed', reason: 'vendor_error' });
    expect(report.errorMessage).toMatch(/401/);
    expect(report.messages.at(-1)).toContain(report.errorMessage);
  });

  it('refuses a directory outside the workspace with exit code 2 and the fix', async () => {
    const result = await home.baton(['ask', '--cwd', '/usr', 'anything']);
    expect(result.exitCode).toBe(2);
    expect(String(result.stdout)).toMatch(/^\/usr is outside the workspace\. Grant it with `baton grant path DIR`/);
    // baton ask reads config.toml anew: the fix applies at once, with no restart.
    expect(String(result.stdout)).not.toMatch(/restart/);
  });

  it('refuses bad arguments with a usage error', async () => {
    const result = await home.baton(['ask', '--bogus', 'x']);
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toMatch(/Unknown option '--bogus'.*Usage: baton ask/);
    expect((await home.baton(['ask'])).exitCode).toBe(2);
  });

  it('cancels its run when the terminal goes away (SIGTERM, SIGHUP), leaving no process behind', async ({ signal: testEnded }) => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      model.enqueue({ kind: 'tool_call', name: 'exec_command', arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 } });
      const child = execa(process.execPath, [CLI, 'ask', 'wait forever'], { env: home.env, extendEnv: false, cwd: home.repo, reject: false, stdin: 'ignore' });
      reapOnTestEnd(child, child);
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      await waitFor(async () => /\[run (hr_[0-9a-f]{12})\] started/.test(out) && (await findRunProcesses(/hr_[0-9a-f]{12}/.exec(out)![0])).length >= 3, testEnded);
      const runId = /hr_[0-9a-f]{12}/.exec(out)![0];
      child.kill(signal);
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(String(result.stdout)).toContain(`[run ${runId}] cancelled · codex`);
      expect(await findRunProcesses(runId)).toEqual([]);
    }
  });

  it('lists the runs it made with baton runs, and shows one', async () => {
    const list = await home.baton(['runs']);
    expect(list.exitCode).toBe(0);
    const ids = [...String(list.stdout).matchAll(/hr_[0-9a-f]{12}/g)].map((m) => m[0]);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const one = await home.baton(['runs', ids[0]!]);
    expect(String(one.stdout)).toMatch(new RegExp(`^\\[run ${ids[0]}\\] (completed|failed|cancelled)`));
    expect((await home.baton(['runs', 'hr_000000000000'])).exitCode).toBe(1);
  });
});

/** Polls `predicate` until it holds; no deadline of its own (the test's timeout ends it via `until`). */
async function waitFor(predicate: () => Promise<boolean>, until: AbortSignal): Promise<void> {
  while (!until.aborted) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('the test ended before the condition was reached');
}
