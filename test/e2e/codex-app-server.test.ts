/**
 * codex through `codex app-server` and through `codex exec`, side by side: the built `baton ask`,
 * the real codex CLI, the fake Responses API on 127.0.0.1. The same scripted model turns give the
 * same outcome, usage and work on both transports; the app-server run is a JSON-RPC session
 * (its events are the server's notifications and answers).
 */
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

interface Report {
  runId: string;
  status: string;
  reason: string | null;
  finalMessage: string | null;
  usage: { inputTokens: number; outputTokens: number } | null;
}

let model: FakeOpenAI;
let codexHome: string;

beforeAll(async () => {
  model = await startFakeOpenAI();
  codexHome = await makeCodexHome(join(tmpdir(), `app-server-codex-${process.pid}`), model.url);
});
afterAll(async () => {
  await model?.close();
  if (codexHome) await rm(codexHome, { recursive: true, force: true });
});

const eventsOf = async (home: CliHome, runId: string): Promise<Record<string, unknown>[]> =>
  (await readFile(join(home.batonHome, 'harness', 'runs', runId, 'events.jsonl'), 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe.each(['app-server', 'exec'] as const)('codex_transport = %s', (transport) => {
  let home: CliHome;
  beforeAll(async () => {
    home = await makeCliHome({
      binDirs: [inject('codexBinDir')],
      harnessToml: `codex_home = ${JSON.stringify(codexHome)}\ncodex_transport = "${transport}"`,
    });
  });
  afterAll(async () => {
    await home?.dispose();
  });

  it('runs the tool call, ends completed with the last message and the usage of both model calls', async () => {
    const file = `made-by-${transport}.txt`;
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `touch ${file}` } },
      { kind: 'message', text: `made ${file}` },
    );
    const result = await home.baton(['ask', '--json', `make ${file}`]);
    expect(result.exitCode, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report).toMatchObject({ status: 'completed', reason: null, finalMessage: `made ${file}` });
    expect(report.usage).toMatchObject({ inputTokens: 200, outputTokens: 20 });
    expect(existsSync(join(home.repo, file))).toBe(true);
    const events = await eventsOf(home, report.runId);
    if (transport === 'app-server') {
      // The session's answers and notifications, never exec's `type` events.
      expect(events.some((e) => e['method'] === 'turn/completed')).toBe(true);
      expect(events.some((e) => 'type' in e)).toBe(false);
    } else {
      expect(events.some((e) => e['type'] === 'turn.completed')).toBe(true);
      expect(events.some((e) => 'method' in e)).toBe(false);
    }
  });

  it('doctor says which transport codex runs use, and why', async () => {
    const result = await home.baton(['doctor', '--json']);
    const report = JSON.parse(result.stdout) as {
      rows: { area: string; details: string[]; facts: Record<string, unknown> }[];
    };
    const codex = report.rows.find((r) => r.area === 'vendor:codex')!;
    expect(codex.facts['transport']).toBe(transport);
    expect(codex.details.join('\n')).toContain(`[harness] codex_transport = "${transport}"`);
  });

  it('keeps sandbox:read-only: the command runs and cannot write', async () => {
    const file = `refused-${transport}.txt`;
    model.enqueue(
      { kind: 'tool_call', name: 'exec_command', arguments: { cmd: `touch ${file}` } },
      { kind: 'message', text: 'could not write' },
    );
    const result = await home.baton(['ask', '--json', `sandbox:read-only make ${file}`]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout) as Report).toMatchObject({ status: 'completed', finalMessage: 'could not write' });
    expect(existsSync(join(home.repo, file))).toBe(false);
  });
});
