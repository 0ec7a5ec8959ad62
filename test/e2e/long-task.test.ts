/**
 * A long task reaches the agent whole (issue #18 item 3): a 300 KB task is over
 * `prompt_argv_max_kb`, so it goes to the CLI on stdin. It used to go to a brief.md outside the
 * repository, which claude may not read in any non-bypass mode. `baton ask` with the real codex
 * and claude CLIs against the fake model servers; the marker sits on the task's last line.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  isMessagesCall,
  messagesOf,
  startFakeAnthropic,
  textsOf,
  type FakeAnthropic,
} from '../fakes/fake-anthropic.js';
import { inputItemsOf, startFakeOpenAI, type FakeOpenAI } from '../fakes/fake-openai.js';
import { makeClaudeConfigDir } from '../support/claude-home.js';
import { makeCliHome, type CliHome } from '../support/cli.js';
import { makeCodexHome } from '../support/codex-home.js';

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let home: CliHome;
let scratch: string;

beforeAll(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  scratch = await mkdtemp(join(tmpdir(), 'long-task-'));
  const codexHome = await makeCodexHome(join(scratch, 'codex'), openai.url);
  const claudeDir = await makeClaudeConfigDir(join(scratch, 'claude'), anthropic.url);
  home = await makeCliHome({
    binDirs: [inject('codexBinDir'), inject('claudeBinDir')],
    harnessToml: `codex_home = ${JSON.stringify(codexHome)}\nclaude_config_dir = ${JSON.stringify(claudeDir)}`,
  });
});
afterAll(async () => {
  await home?.dispose();
  await openai?.close();
  await anthropic?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** A 300 KB task as three arguments (one argv string holds at most 128 KiB), the marker last. */
function longTask(marker: string): string[] {
  const chunk = `${'Context line for the long task.\n'.repeat(3_200)}`;
  return [`Read all of this.\n${chunk}`, chunk, `${chunk}\nLast line: answer with ${marker}`];
}

describe('a 300 KB task', () => {
  it('reaches codex whole, and the answer comes back', async () => {
    const marker = 'MARKER-codex-7f3a';
    openai.enqueue({ kind: 'message', text: `Echo: ${marker}` });
    const before = openai.requests.length;
    const result = await home.baton(['ask', '--vendor', 'codex', ...longTask(marker)]);
    expect(result.stdout).toMatch(/\] completed · codex/);
    expect(result.stdout).toContain(`Echo: ${marker}`);
    const sent = openai.requests
      .slice(before)
      .flatMap(inputItemsOf)
      .map((item) => JSON.stringify(item))
      .join('\n');
    expect(sent).toContain(`Last line: answer with ${marker}`);
    expect(result.exitCode).toBe(0);
  });

  it('reaches claude whole, and the answer comes back', async () => {
    const marker = 'MARKER-claude-91bd';
    anthropic.enqueue({ kind: 'message', text: `Echo: ${marker}` });
    const before = anthropic.requests.length;
    const result = await home.baton(['ask', '--vendor', 'claude', ...longTask(marker)]);
    expect(result.stdout).toMatch(/\] completed · claude/);
    expect(result.stdout).toContain(`Echo: ${marker}`);
    const sent = anthropic.requests
      .slice(before)
      .filter(isMessagesCall)
      .flatMap(messagesOf)
      .flatMap(textsOf)
      .join('\n');
    expect(sent).toContain(`Last line: answer with ${marker}`);
    expect(result.exitCode).toBe(0);
  });
});
