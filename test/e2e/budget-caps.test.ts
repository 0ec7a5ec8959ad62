/**
 * Spending caps end to end (issue #17): `/claude budget:USD` and `turns:N` reach the real claude
 * CLI as `--max-budget-usd` / `--max-turns` and its own stop becomes `budget_exceeded` /
 * `max_turns`; `/codex tokens:N` is enforced by baton from codex's reported usage. The real CLIs
 * run against the fake model servers, baton behind the fake Bot API, all on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isMessagesCall } from '../fakes/fake-anthropic.js';
import { OWNER, WAIT_MS, replyTarget, runIdOf, startTelegramE2E, type TelegramE2E } from '../support/telegram-e2e.js';

let world: TelegramE2E;

beforeAll(async () => {
  world = await startTelegramE2E({ binDirs: [inject('codexBinDir'), inject('claudeBinDir')] });
});
afterAll(async () => world?.dispose());

/** Sends `text` as the owner and waits for the run's outcome (not its `started`). */
async function outcomeOf(text: string, messageId: number): Promise<{ runId: string; outcome: string }> {
  const { telegram } = world;
  telegram.pushUpdate(world.privateMessage(OWNER, text, messageId));
  const started = await telegram.waitForSent(
    (m) => replyTarget(m) === messageId && m.text.includes('] started'),
    WAIT_MS,
  );
  const runId = runIdOf(started.text);
  const done = await telegram.waitForSent(
    (m) => m.text.startsWith(`[run ${runId}] `) && !m.text.includes('] started'),
    WAIT_MS,
  );
  return { runId, outcome: done.text };
}

describe('budget caps', () => {
  it('a claude run with a tiny budget is stopped by the CLI and ends failed/budget_exceeded with its cost', async () => {
    const { anthropic } = world;
    const before = anthropic.requests.filter(isMessagesCall).length;
    // One turn only: a CLI that ignored the budget would go on to a second call (the fake then
    // answers "ok") and complete.
    anthropic.enqueue({
      kind: 'tool_use',
      name: 'Bash',
      input: { command: 'printf one > one.txt', description: 'first step' },
    });
    const { runId, outcome } = await outcomeOf('/claude budget:0.0001 mode:acceptEdits do two steps', 10);
    const lines = outcome.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^\\[run ${runId}\\] failed · claude · .* · [\\d,]+ tokens \\(.*, \\$\\d+\\.\\d{4}\\)$`),
    );
    expect(outcome).toContain('Reason: budget_exceeded');
    expect(outcome).toContain('Reached maximum budget ($0.0001)');
    // The CLI stopped after the first model call: the second turn was never asked for.
    expect(anthropic.requests.filter(isMessagesCall).length - before).toBe(1);
    const argvResult = (await world.eventsOf(runId)).find((e) => e.type === 'result');
    expect(argvResult?.subtype).toBe('error_max_budget_usd');
  });

  it('a claude run with turns:1 ends failed/max_turns', async () => {
    const { anthropic } = world;
    anthropic.enqueue({ kind: 'tool_use', name: 'Bash', input: { command: 'printf a > a.txt', description: 'step' } });
    const { outcome } = await outcomeOf('/claude turns:1 mode:acceptEdits do it', 20);
    expect(outcome).toContain('Reason: max_turns');
    expect(outcome).toContain('Reached maximum number of turns (1)');
  });

  it('a codex run whose reported usage crosses tokens:N is stopped as failed/budget_exceeded, showing what it spent', async () => {
    const { openai } = world;
    openai.enqueue(
      {
        kind: 'tool_call',
        name: 'exec_command',
        arguments: { cmd: 'true' },
        usage: { input_tokens: 4000, output_tokens: 500 },
      },
      { kind: 'message', text: 'All done.', usage: { input_tokens: 6000, output_tokens: 700 } },
    );
    const { runId, outcome } = await outcomeOf('/codex tokens:5k do the thing', 30);
    const lines = outcome.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^\\[run ${runId}\\] failed · codex · .* · 11,200 tokens \\(10,000 in, 1,200 out\\)$`),
    );
    expect(lines[1]).toBe(
      'The run used 11,200 tokens, over its cap of 5,000 (tokens:N); it was stopped when the CLI reported it.',
    );
    expect(outcome).toContain('Reason: budget_exceeded');
    expect(outcome).toContain('Last agent message:\nAll done.');
  });

  it('a codex run under its token cap completes', async () => {
    world.openai.enqueue({ kind: 'message', text: 'Small job.', usage: { input_tokens: 100, output_tokens: 20 } });
    const { runId, outcome } = await outcomeOf('/codex tokens:1000 small job', 40);
    expect(outcome.split('\n')[0]).toMatch(new RegExp(`^\\[run ${runId}\\] completed · codex · .* · 120 tokens`));
  });

  it('refuses budget: and turns: for codex, which cannot enforce them, with the fix', async () => {
    const { telegram } = world;
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex budget:1 do it', 50));
    expect((await telegram.waitForSent((m) => replyTarget(m) === 50, WAIT_MS)).text).toMatch(
      /^budget: is a claude option: codex reports tokens, not dollars.*Use tokens:N/,
    );
    telegram.pushUpdate(world.privateMessage(OWNER, '/codex turns:3 do it', 51));
    expect((await telegram.waitForSent((m) => replyTarget(m) === 51, WAIT_MS)).text).toMatch(
      /^turns: is a claude option: codex has no turn limit/,
    );
  });
});
