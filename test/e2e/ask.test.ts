/**
 * `baton ask`, the terminal channel, end to end: the built CLI, the real codex CLI, the fake
 * Responses API on 127.0.0.1.
 */
import { execa } from 'execa';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { findRunProcesses } from '../../src/harness/process-tree.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/fake-anthropic.js';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeClaudeConfigDir } from '../support/claude-home.js';
import { CLI, makeCliHome, reapOnTestEnd, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';
import { blockOn, firstRunId, startAsk, until } from '../support/ask-queue.js';
import { testEngine } from '../support/database.js';
import { waitFor } from '../support/wait.js';

let model: FakeOpenAI;
let home: CliHome;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(
    join((await import('node:os')).tmpdir(), `ask-codex-${process.pid}`),
    model.url,
  );
  home = await makeCliHome({
    binDirs: [inject('codexBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}`,
  });
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
    // A 400 (a 401 is a login problem: test/e2e/codex-not-logged-in.test.ts).
    model.enqueue({ kind: 'http_error', status: 400 });
    const result = await home.baton(['ask', '--json', 'this fails']);
    expect(result.exitCode).toBe(1);
    const report = JSON.parse(String(result.stdout)) as {
      status: string;
      reason: string;
      errorMessage: string;
      messages: string[];
    };
    expect(report).toMatchObject({ status: 'failed', reason: 'vendor_error' });
    expect(report.errorMessage).toMatch(/400/);
    expect(report.messages.at(-1)).toContain(report.errorMessage);
  });

  it('refuses a directory outside the workspace with exit code 2 and the fix', async () => {
    const result = await home.baton(['ask', '--cwd', '/usr', 'anything']);
    expect(result.exitCode).toBe(2);
    expect(String(result.stdout)).toMatch(/^\/usr is outside the workspace\. Grant it with `baton grant path DIR`/);
    // baton ask reads config.toml anew: the fix applies at once, with no restart.
    expect(String(result.stdout)).not.toMatch(/restart/);
  });

  it('refuses an unknown option at the start of the task with a did-you-mean; a colon in prose stays task text', async () => {
    const result = await home.baton(['ask', 'timout:5 fix it']);
    expect(result.exitCode).toBe(2);
    expect(String(result.stdout)).toMatch(/^Unknown option timout:\. Did you mean "timeout:"\?/);
    model.enqueue({ kind: 'message', text: 'Read it.' });
    const prose = await home.baton(['ask', '--json', 'fix: the bug at http://x.test/a']);
    expect(prose.exitCode).toBe(0);
    expect(model.requests.some((r) => JSON.stringify(r.body).includes('fix: the bug at http://x.test/a'))).toBe(true);
  });

  it('refuses bad arguments with a usage error', async () => {
    const result = await home.baton(['ask', '--bogus', 'x']);
    expect(result.exitCode).toBe(2);
    expect(String(result.stderr)).toMatch(/Unknown option '--bogus'.*Usage: baton ask/);
    expect((await home.baton(['ask'])).exitCode).toBe(2);
  });

  it('cancels its run when the terminal goes away (SIGTERM, SIGHUP), leaving no process behind', async ({
    signal: testEnded,
  }) => {
    for (const signal of ['SIGTERM', 'SIGHUP'] as const) {
      model.enqueue({
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 },
      });
      const child = execa(process.execPath, [CLI, 'ask', 'wait forever'], {
        env: home.env,
        extendEnv: false,
        cwd: home.repo,
        reject: false,
        stdin: 'ignore',
      });
      reapOnTestEnd(child, child);
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      await waitFor(
        async () =>
          /\[run (hr_[0-9a-f]{12})\] started/.test(out) &&
          (await findRunProcesses(/hr_[0-9a-f]{12}/.exec(out)![0])).length >= 3,
        { signal: testEnded, timeoutMs: Number.POSITIVE_INFINITY, intervalMs: 50 },
      );
      const runId = /hr_[0-9a-f]{12}/.exec(out)![0];
      child.kill(signal);
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(String(result.stdout)).toContain(`[run ${runId}] cancelled · codex`);
      expect(await findRunProcesses(runId)).toEqual([]);
    }
  });

  // With PostgreSQL through the database; with embedded PGlite, which baton ask holds, through
  // the admin endpoint baton ask serves like the service.
  it('is cancelled by baton cancel and stopped by baton stop from another process; a finished run is "already finished"', async ({
    signal,
  }) => {
    for (const command of [['cancel'], ['stop']]) {
      model.enqueue({
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: 'sleep 600', yield_time_ms: 30_000 },
      });
      const child = execa(process.execPath, [CLI, 'ask', 'wait forever'], {
        env: home.env,
        extendEnv: false,
        cwd: home.repo,
        reject: false,
        stdin: 'ignore',
      });
      reapOnTestEnd(child, child);
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      await waitFor(
        async () =>
          /\[run (hr_[0-9a-f]{12})\] started/.test(out) &&
          (await findRunProcesses(/hr_[0-9a-f]{12}/.exec(out)![0])).length >= 3,
        { signal, timeoutMs: Number.POSITIVE_INFINITY, intervalMs: 50 },
      );
      const runId = /hr_[0-9a-f]{12}/.exec(out)![0];
      const stopped = await home.baton(command[0] === 'cancel' ? ['cancel', runId] : ['stop']);
      expect(stopped.exitCode, stopped.stdout).toBe(0);
      expect(stopped.stdout).toMatch(
        command[0] === 'cancel'
          ? new RegExp(`\\[run ${runId}\\] cancelled`)
          : /\[run hr_[0-9a-f]{12}\] cancelled|Stopped 1 active run\./,
      );
      const result = await child;
      expect(result.exitCode).toBe(130);
      expect(String(result.stdout)).toContain(`[run ${runId}] cancelled · codex`);
      expect(await findRunProcesses(runId)).toEqual([]);
    }
    model.enqueue({ kind: 'message', text: 'quick' });
    const quick = await home.baton(['ask', '--json', 'quick one']);
    const completed = JSON.parse(quick.stdout) as { runId: string; status: string };
    expect(completed.status).toBe('completed');
    const again = await home.baton(['cancel', completed.runId]);
    expect(again).toMatchObject({ exitCode: 1, stdout: 'That coding run has already finished.' });
  }, 180_000); // six baton processes in a row: slow on a loaded machine, never a timing assertion

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

describe('baton ask with the real claude CLI', () => {
  let anthropic: FakeAnthropic;
  let claudeHome: CliHome;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    const configDir = await makeClaudeConfigDir(
      join((await import('node:os')).tmpdir(), `ask-claude-${process.pid}`),
      anthropic.url,
    );
    claudeHome = await makeCliHome({
      binDirs: [inject('claudeBinDir')],
      harnessToml: `claude_config_dir = ${JSON.stringify(configDir)}`,
    });
  });
  afterAll(async () => {
    await claudeHome?.dispose();
    await anthropic?.close();
  });

  it('--json lists the tool calls claude denied, and the headline counts them', async () => {
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch denied.txt' } },
      { kind: 'message', text: 'Created denied.txt.' },
    );
    const result = await claudeHome.baton(['ask', '--vendor', 'claude', '--json', 'create denied.txt']);
    const report = JSON.parse(result.stdout) as { status: string; denials: unknown[]; messages: string[] };
    expect(report.status).toBe('completed');
    expect(report.denials).toEqual([{ tool: 'Bash', detail: 'touch denied.txt' }]);
    expect(report.messages.at(-1)?.split('\n')[0]).toMatch(/ · 1 tool call denied$/);
    await expect(readFile(join(claudeHome.repo, 'denied.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('takes mode:acceptEdits in the task words, as the outcome advises, and then writes', async () => {
    anthropic.enqueue(
      { kind: 'tool_use', name: 'Bash', input: { command: 'touch allowed.txt' } },
      { kind: 'message', text: 'Created allowed.txt.' },
    );
    const result = await claudeHome.baton([
      'ask',
      '--vendor',
      'claude',
      '--json',
      'mode:acceptEdits create allowed.txt',
    ]);
    const report = JSON.parse(result.stdout) as { status: string; denials: unknown[] };
    expect(report).toMatchObject({ status: 'completed', denials: [] });
    await readFile(join(claudeHome.repo, 'allowed.txt'));
  });
});

describe('baton ask on a network with a proxy and a corporate CA', () => {
  let envHome: CliHome;

  beforeAll(async () => {
    envHome = await makeCliHome({
      binDirs: [],
      harnessToml:
        'pass_env = ["HTTPS_PROXY", "NO_PROXY", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "LANG", "LC_*", "MY_PROXY_TOKEN"]\n' +
        // The stand-in below speaks `codex exec --json`.
        'codex_transport = "exec"',
    });
    // A stand-in codex whose answer is the environment it was given.
    const fake = join(envHome.dir, 'fake-bin', 'codex');
    await mkdir(join(envHome.dir, 'fake-bin'), { recursive: true });
    await writeFile(
      fake,
      [
        `#!${process.execPath}`,
        "if (process.argv[2] === '--version') { console.log('codex-cli 0.171.0'); process.exit(0); }",
        "const emit = (e) => process.stdout.write(JSON.stringify(e) + '\\n');",
        "emit({ type: 'thread.started', thread_id: 't-env' });",
        "emit({ type: 'item.completed', item: { id: 'i', type: 'agent_message', text: JSON.stringify(process.env) } });",
        "emit({ type: 'turn.completed', usage: { input_tokens: 1, cached_input_tokens: 0, output_tokens: 1 } });",
      ].join('\n'),
    );
    await chmod(fake, 0o755);
    envHome.env.PATH = [
      join(envHome.dir, 'node_modules', '.bin'),
      join(envHome.dir, 'npm/node_modules/@npmcli/run-script/lib/node-gyp-bin'),
      join(envHome.dir, 'fake-bin'),
      envHome.env.PATH,
    ].join(':');
  });
  afterAll(async () => envHome?.dispose());

  it('gives the CLI the proxy, CA and locale names that are set, secrets only when listed exactly, never service secrets, and no npm run-script PATH', async () => {
    Object.assign(envHome.env, {
      HTTPS_PROXY: 'http://proxy.corp.example:3128',
      NO_PROXY: '127.0.0.1,localhost',
      SSL_CERT_FILE: '/etc/corp/ca.pem',
      NODE_EXTRA_CA_CERTS: '/etc/corp/ca.pem',
      LANG: 'de_DE.UTF-8',
      LC_ALL: 'de_DE.UTF-8',
      LC_SECRET_TOKEN: 'wildcard-must-not-pass-this',
      MY_PROXY_TOKEN: 'listed-exactly',
      TELEGRAM_BOT_TOKEN: '123:not-for-children',
      // As under `npm start` of a package in envHome.dir, which put the run-script dirs first.
      npm_lifecycle_event: 'start',
      npm_package_json: join(envHome.dir, 'package.json'),
    });
    const result = await envHome.baton(['ask', '--json', 'show env']);
    const report = JSON.parse(result.stdout) as { status: string; finalMessage: string };
    expect(report.status).toBe('completed');
    const env = JSON.parse(report.finalMessage) as Record<string, string>;
    expect(env).toMatchObject({
      HTTPS_PROXY: 'http://proxy.corp.example:3128',
      NO_PROXY: '127.0.0.1,localhost',
      SSL_CERT_FILE: '/etc/corp/ca.pem',
      NODE_EXTRA_CA_CERTS: '/etc/corp/ca.pem',
      LANG: 'de_DE.UTF-8',
      LC_ALL: 'de_DE.UTF-8',
      MY_PROXY_TOKEN: 'listed-exactly',
    });
    expect(env).not.toHaveProperty('LC_SECRET_TOKEN');
    expect(env).not.toHaveProperty('TELEGRAM_BOT_TOKEN');
    expect(env).not.toHaveProperty('DATABASE_URL');
    // npm's leading run-script dirs are gone; the PATH starts where the user's own began.
    expect(env.PATH!.split(':')[0]).toBe(join(envHome.dir, 'fake-bin'));
    expect(env.PATH).not.toContain(join(envHome.dir, 'node_modules', '.bin'));
    expect(env.PATH).not.toContain(join(envHome.dir, 'npm/node_modules/@npmcli/run-script/lib/node-gyp-bin'));
  });
});

// Two asks at once need a database both can open: PostgreSQL (`DATABASE_URL` or embedded). With
// PGlite only one process may open it; beside the service the asks go through it
// (test/e2e/beside-service.test.ts covers the queue there, on both engines).
describe.runIf(testEngine === 'postgres')('baton ask in a busy checkout, without a service', () => {
  it('waits for its turn and prints the outcome; no ask starts a queued run it will not see through; --no-wait says how to follow it', async ({
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
      `Not waiting (--no-wait). No baton service is running: start one (baton start) and it starts the run when its turn comes. Follow it with baton runs ${noWaitId}; drop it with baton cancel ${noWaitId}.`,
    );
    expect(second.child.exitCode).toBeNull(); // waiting, not failed

    expect((await home.baton(['cancel', blockerId])).exitCode).toBe(0);
    expect((await blocker.child).exitCode).toBe(130);
    const ended = await second.child;
    expect(ended.exitCode, ended.stdout + ended.stderr).toBe(0);
    expect(String(ended.stdout)).toMatch(new RegExp(`\\[run ${secondId}\\] completed · codex · `));
    // Neither ask started the run queued by --no-wait on its way out: it waits for a service.
    expect((await home.baton(['runs', noWaitId])).stdout).toMatch(new RegExp(`^\\[run ${noWaitId}\\] queued`));
    expect(model.requests.some((r) => JSON.stringify(r.body).includes('the task not waited for'))).toBe(false);
    expect((await home.baton(['cancel', noWaitId])).exitCode).toBe(0);
  }, 240_000);
});
