/**
 * A codex that is not logged in (issue #12 leftovers): the model server answers 401 and codex
 * 0.171.0 retries it ("Reconnecting... 1/5 (unexpected status 401 Unauthorized: …)", five times
 * per transport, with growing pauses; measured against this fake) before it gives up. baton ends
 * the run at the first 401 as failed/not_logged_in, with the fix, and never says "retrying".
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

/** What api.openai.com answers a request without credentials. */
const UNAUTHORIZED = JSON.stringify({
  error: {
    message: 'Missing bearer or basic authentication in header',
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
});

let model: FakeOpenAI;
let codexHome: string;

beforeAll(async () => {
  model = await startFakeOpenAI({ fallback: () => ({ kind: 'http_error', status: 401, body: UNAUTHORIZED }) });
  codexHome = await makeCodexHome(join(tmpdir(), `not-logged-in-codex-${process.pid}`), model.url);
  // codex's own retry policy, as a user has it (the shared test home turns retries off).
  const config = await readFile(join(codexHome, 'config.toml'), 'utf8');
  await writeFile(join(codexHome, 'config.toml'), config.replace(/^(request|stream)_max_retries = 0$/gm, ''));
});
afterAll(async () => {
  await model?.close();
  if (codexHome) await rm(codexHome, { recursive: true, force: true });
});

// Both transports: app-server words the 401 in an error's `additionalDetails`, exec in its message.
describe.each(['app-server', 'exec'])('codex that is not logged in (codex_transport = %s)', (transport) => {
  let home: CliHome;
  beforeAll(async () => {
    home = await makeCliHome({
      binDirs: [inject('codexBinDir')],
      harnessToml: `codex_home = ${JSON.stringify(codexHome)}\ncodex_transport = ${JSON.stringify(transport)}`,
    });
  });
  afterAll(async () => {
    await home?.dispose();
  });

  it('ends the run at the first 401 as failed/not_logged_in with the fix, without a retry notice', async () => {
    const result = await home.baton(['ask', '--json', 'anything']);
    expect(result.exitCode, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as {
      status: string;
      reason: string;
      errorMessage: string;
      messages: string[];
    };
    expect(report).toMatchObject({ status: 'failed', reason: 'not_logged_in' });
    expect(report.errorMessage).toContain('401 Unauthorized');
    expect(report.errorMessage).toContain(`CODEX_HOME=${codexHome} codex login`);
    expect(report.errorMessage).toContain('[harness] codex_home');
    expect(report.messages.join('\n')).not.toContain('is retrying');
    expect(model.requests.length).toBeGreaterThan(0);
  });
});
