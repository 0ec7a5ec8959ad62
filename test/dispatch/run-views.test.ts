import { describe, expect, it } from 'vitest';
import {
  formatLocalTime,
  formatRun,
  formatRunList,
  tailBytes,
  RESULT_TAIL_BYTES,
} from '../../src/dispatch/run-views.js';
import type { DeliveryRow, RunRow } from '../../src/store/schema.js';

const created = new Date('2026-11-29T08:00:00Z');
const run = {
  id: 'hr_0123456789ab',
  parentRunId: null,
  vendor: 'codex',
  status: 'completed',
  reason: null,
  task: 't',
  voiceTranscript: null,
  cwd: '/repo',
  worktreeRoot: '/repo',
  branch: null,
  sourceRoot: null,
  worktreeRemovedAt: null,
  launch: null,
  options: { timeoutMinutes: 30, progress: false },
  origin: { platform: 'telegram', chatId: '1', senderId: '1', messageId: '2' },
  vendorSessionId: 's1',
  finalMessage: `${'é'.repeat(3000)}END`,
  errorMessage: null,
  usage: { inputTokens: 1200, cachedInputTokens: 0, outputTokens: 300 },
  denials: [],
  exitCode: 0,
  exitSignal: null,
  verifyReason: null,
  verification: null,
  pid: 1,
  approvalTokenSha256: null,
  artifactTruncated: false,
  cancelRequested: null,
  supervisor: 'h:1',
  node: null,
  nodeInstance: null,
  quotaResetsAt: null,
  notBefore: null,
  createdAt: created,
  startedAt: created,
  endedAt: new Date(created.getTime() + 65_000),
} as RunRow;
const dead = {
  id: 7,
  runId: run.id,
  kind: 'outcome',
  status: 'dead',
  attempts: 20,
  lastError: 'network: down',
  body: `[run ${run.id}] completed\nmore`,
} as DeliveryRow;

describe('run views', () => {
  it('lists counts first and dead letters apart', () => {
    const text = formatRunList([run], { active: 0, pendingDeliveries: 2, deadLetters: 1 }, [dead]);
    expect(text.split('\n')[0]).toBe('0 active · 2 pending deliveries · 1 dead letter');
    expect(text).toContain(`${run.id} · completed · codex · /repo`);
    expect(text).toContain(
      `Dead letters (never sent; kept for you):\n#7 · ${run.id} · outcome · 20 attempts · network: down · [run ${run.id}] completed`,
    );
  });

  it('lists each run with its local time and the first line of its task, cut', () => {
    const long = { ...run, task: `fix the ${'flaky '.repeat(20)}tests\nand then more` };
    const text = formatRunList([run, long], { active: 0, pendingDeliveries: 0, deadLetters: 0 }, [], 'Europe/Berlin');
    const [first, second] = text.split('\n').filter((line) => line.startsWith(run.id));
    expect(first).toBe(`${run.id} · completed · codex · /repo · 2026-11-29 09:00 GMT+1 · t`);
    expect(second!.endsWith('…')).toBe(true);
    expect(second).toContain(' · fix the flaky');
    expect(second).not.toContain('and then more');
    expect(formatLocalTime(created, 'America/New_York')).toBe('2026-11-29 03:00 EST');
    expect(formatRun(long, [], [], 'UTC')).toContain('\ncreated: 2026-11-29 08:00 UTC\n');
  });

  it('shows one run with usage, delivery state and at most 4096 bytes of its result', () => {
    const text = formatRun(run, [dead]);
    expect(text).toMatch(/^\[run hr_0123456789ab\] completed\nvendor: codex\ncwd: \/repo/);
    expect(text).toContain('usage: 1,500 tokens (1,200 in, 300 out)');
    expect(text).toContain('deliveries: 0 delivered, 0 pending, 1 dead');
    const tail = text.slice(text.indexOf('\n\n') + 2);
    expect(Buffer.byteLength(tail.replace(/^…/, ''))).toBeLessThanOrEqual(RESULT_TAIL_BYTES);
    expect(tail.endsWith('END')).toBe(true);
  });

  it('shows the spending caps a run had, and the cost where the CLI reported one', () => {
    const capped = {
      ...run,
      vendor: 'claude' as const,
      options: { ...run.options, budgetUsd: 2.5, maxTurns: 20, maxTokens: 200_000 },
      usage: { inputTokens: 1200, cachedInputTokens: 0, outputTokens: 300, costUsd: 0.0123 },
    };
    const text = formatRun(capped, []);
    expect(text).toContain('\ncaps: budget $2.50, 20 turns, 200,000 tokens\n');
    expect(text).toContain('usage: 1,500 tokens (1,200 in, 300 out, $0.0123)');
    expect(formatRun(run, [])).not.toContain('caps:');
  });

  it('counts denied tool calls in the headline and lists at most 5, one line each, with how to allow writes', () => {
    const denials = Array.from({ length: 7 }, (_, i) => ({ tool: 'Bash', detail: `touch f${i}.txt` }));
    const text = formatRun({ ...run, finalMessage: 'I created the files.', denials }, []);
    expect(text.split('\n')[0]).toBe('[run hr_0123456789ab] completed · 7 tool calls denied');
    expect(text).toContain(
      '- Bash: touch f0.txt\n- Bash: touch f1.txt\n- Bash: touch f2.txt\n- Bash: touch f3.txt\n- Bash: touch f4.txt\n- and 2 more',
    );
    expect(text).not.toContain('f5.txt');
    expect(text).toContain('mode:acceptEdits');
  });

  it('never cuts a character when tailing bytes', () => {
    expect(tailBytes('aé€😀', 5)).toBe('…😀');
    expect(tailBytes('short', 4096)).toBe('short');
  });
});
