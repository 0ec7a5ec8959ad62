/**
 * config.toml edited while the service runs (issue #12 leftovers): `baton approve` and `baton
 * grant path` apply to the running service's next command without a restart — the path a root
 * user's `baton ask` takes with embedded PGlite, through `POST /admin/ask` — and `baton doctor`
 * says in one line when the file changed in keys that need a restart, or into something the
 * service cannot use (which it then keeps running without), and how to restart it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';
import { startService, type ServiceProcess } from '../support/service.js';

let model: FakeOpenAI;
let home: CliHome;
let service: ServiceProcess;
let configPath: string;
let codexHomeLine: string;
let codexHomeDir: string;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(join(tmpdir(), `live-config-codex-${process.pid}`), model.url);
  codexHomeDir = codexHome;
  codexHomeLine = `codex_home = ${JSON.stringify(codexHome)}`;
  home = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: codexHomeLine });
  configPath = join(home.batonHome, 'config.toml');
  // A newcomer's state before the README's approve and grant lines.
  await writeFile(configPath, ['[harness]', codexHomeLine, ''].join('\n'));
  service = await startService(home.env);
});
afterAll(async () => {
  await service?.stop();
  await home?.dispose();
  await model?.close();
  if (codexHomeDir) await rm(codexHomeDir, { recursive: true, force: true });
});

/** What `baton ask` sends the service when it holds the database: the run's messages and report. */
async function askService(task: string): Promise<{ messages: string[]; report: Record<string, unknown> }> {
  const state = JSON.parse(await readFile(join(home.batonHome, 'service.json'), 'utf8')) as {
    port: number;
    adminToken: string;
  };
  const response = await fetch(`http://127.0.0.1:${state.port}/admin/ask`, {
    method: 'POST',
    headers: { authorization: `Bearer ${state.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ text: `/run in:"${home.repo}" ${task}` }),
  });
  expect(response.status).toBe(200);
  const lines = (await response.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { message?: string; report?: Record<string, unknown> });
  return {
    messages: lines.flatMap((l) => (l.message === undefined ? [] : [l.message])),
    report: lines.find((l) => l.report)?.report ?? {},
  };
}

describe('config.toml edited while the service runs', () => {
  it('applies baton approve and baton grant to the next command, with no restart', async () => {
    const refused = await askService('before approval');
    expect(refused.report).toMatchObject({ status: 'refused', code: 'not_approved' });
    expect(refused.messages.join('\n')).not.toMatch(/then restart/);

    const approve = await home.baton(['approve']);
    expect(approve.exitCode).toBe(0);
    expect(approve.stdout).toContain('no restart needed');
    const grant = await home.baton(['grant', 'path', join(home.repo, '..')]);
    expect(grant.exitCode).toBe(0);

    model.enqueue({ kind: 'message', text: 'Approved without a restart.' });
    const ran = await askService('after approval');
    expect(ran.report, ran.messages.join('\n')).toMatchObject({
      status: 'completed',
      finalMessage: 'Approved without a restart.',
    });

    // The service's own report agrees: approved, one root, nothing waiting for a restart.
    const doctor = await home.baton(['doctor', '--json']);
    const rows = (
      JSON.parse(doctor.stdout) as { rows: { area: string; status: string; facts: Record<string, unknown> }[] }
    ).rows;
    expect(rows.find((r) => r.area === 'harness')?.facts).toMatchObject({ approved: true, workspaceRoots: 1 });
    expect(rows.find((r) => r.area === 'config')).toMatchObject({ status: 'ok', facts: { restartNeeded: false } });
  });

  it('baton doctor names keys that need a restart and how; a file it cannot use is kept out', async () => {
    const approved = await readFile(configPath, 'utf8');
    await writeFile(configPath, approved.replace('[harness]\n', '[harness]\nmax_active = 3\n'));
    const changed = await home.baton(['doctor']);
    expect(changed.stdout).toContain(
      `config changed since the service started (harness.max_active): restart it (stop it with Ctrl-C in its terminal, or kill ${service.pid}, then run baton start again)`,
    );

    await writeFile(configPath, `${approved}\n[harness\n`);
    const broken = await home.baton(['doctor']);
    expect(broken.stdout).toMatch(
      /config changed since the service started and cannot be used, so the service keeps its old settings: .*TOML syntax error/,
    );
    expect(broken.stdout).toContain('then restart it (stop it with Ctrl-C');
    // The old settings still serve: approved, the granted root.
    model.enqueue({ kind: 'message', text: 'Still served.' });
    expect((await askService('with a broken file')).report).toMatchObject({
      status: 'completed',
      finalMessage: 'Still served.',
    });

    // Put back as the service runs it: nothing to say.
    await writeFile(configPath, approved);
    const back = await home.baton(['doctor']);
    expect(back.stdout).not.toContain('config changed since the service started');
  });
});
