/**
 * A second `npm start` on a home whose service already runs. With PostgreSQL it used to start as
 * a second node of the same name (half the routed runs went to it), overwrite the first one's
 * `service.json` with its own port and token, and delete that file when stopped — after which
 * `baton doctor`, `baton ask` and the approval servers could no longer find the running service.
 * It must be refused at start with the pid of the running one and the fix, touching nothing of it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';
import { testEngine } from '../support/database.js';
import { startService, type ServiceProcess } from '../support/service.js';

let model: FakeOpenAI;
let home: CliHome;
let first: ServiceProcess;

beforeAll(async () => {
  model = await startFakeOpenAI();
  const codexHome = await makeCodexHome(
    join((await import('node:os')).tmpdir(), `second-start-codex-${process.pid}`),
    model.url,
  );
  home = await makeCliHome({
    binDirs: [inject('codexBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}`,
  });
  first = await startService(home.env);
}, 120_000);
afterAll(async () => {
  await first?.stop();
  await home?.dispose();
  await model?.close();
});

async function serviceJson(): Promise<{ pid: number; port: number }> {
  return JSON.parse(await readFile(join(home.batonHome, 'service.json'), 'utf8')) as { pid: number; port: number };
}

describe(`a second baton start on the same home (${testEngine})`, () => {
  it('is refused with the running one’s pid and the fix; the running service keeps its service.json', async () => {
    const before = await serviceJson();
    expect(before.pid).toBe(first.pid);
    const second = await startService(home.env).then(
      async (started) => {
        // Started beside the first: stop it the way a user would, then fail with what it did.
        await started.stop();
        return { started: true, output: started.stdout() + started.stderr() };
      },
      (err: unknown) => ({ started: false, output: String(err) }),
    );
    expect(second.output).toContain(`pid ${first.pid}`);
    expect(second.output).toMatch(/already running on this home/);
    expect(second.started).toBe(false);
    // The running service is untouched: its state file, and it answers on its port.
    expect(await serviceJson()).toEqual(before);
    const live = await fetch(`http://127.0.0.1:${before.port}/health/live`);
    expect(live.status).toBe(200);
    expect(first.exitCode()).toBeUndefined();
  }, 120_000);

  it.runIf(process.env.DATABASE_URL)(
    'another home on the same database with the same [node] name is refused, with the fix',
    async () => {
      const other = await makeCliHome({ binDirs: [inject('codexBinDir')], harnessToml: '' });
      try {
        // Both homes leave [node] name at its default, the host name; the second shares the first's database.
        const second = await startService({ ...other.env, DATABASE_URL: home.env.DATABASE_URL! }).then(
          async (started) => {
            await started.stop();
            return { started: true, output: started.stdout() + started.stderr() };
          },
          (err: unknown) => ({ started: false, output: String(err) }),
        );
        expect(second.output).toMatch(new RegExp(`The node name \\S+ is taken: baton on \\S+ \\(pid ${first.pid}\\)`));
        expect(second.output).toContain('[node] name = ');
        expect(second.started).toBe(false);
        expect(first.exitCode()).toBeUndefined();
      } finally {
        await other.dispose();
      }
    },
    120_000,
  );
});
