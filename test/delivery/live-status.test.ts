/**
 * The live status of a run (issue #14 item 3): the live facts the vendors' reducers fold from
 * real CLI captures, the status lines, and the StatusEditor's throttle, rate-limit hold and
 * give-up rules on a fake clock (vitest's fake timers drive both `setTimeout` and `Date.now`).
 * The editor's store is an in-memory stand-in for the one query it makes (the started delivery
 * row); the platform side is covered end to end in test/e2e/status-message-*.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ChannelSendError, type MessageEdit } from '../../src/channels/types.js';
import { systemClock } from '../../src/core/clock.js';
import { silentLogger } from '../../src/core/logger.js';
import { StatusEditor, fitStatus } from '../../src/delivery/status-editor.js';
import { statusText } from '../../src/wording/runs.js';
import { JsonLineDecoder } from '../../src/harness/json-lines.js';
import { claudeVendor } from '../../src/harness/vendors/claude.js';
import { codexVendor } from '../../src/harness/vendors/codex.js';
import type { Vendor } from '../../src/harness/vendors/types.js';
import type { DeliveryRow } from '../../src/store/schema.js';
import { RecordingChannel } from '../fakes/recording-channel.js';

const FIXTURES = new URL('../fixtures/vendor-streams/', import.meta.url);

function reduce(vendor: Vendor, name: string) {
  const decoder = new JsonLineDecoder(1_048_576);
  const reducer = vendor.newReducer();
  for (const line of [...decoder.push(readFileSync(new URL(name, FIXTURES))), ...decoder.end()])
    if (line.kind === 'event') reducer.push(line.value);
  return reducer.facts();
}

describe('live facts from real CLI captures', () => {
  it('codex: the last started command without its bash wrapper, patched files, tokens from turn.completed', () => {
    const live = reduce(codexVendor, 'codex-items.jsonl').live!;
    expect(live.step).toBe('running exit 3');
    expect(live.recentSteps).toEqual([
      'running echo hi && ls',
      'tool echo/echo',
      'searching the web for codex exec json',
      'running exit 3',
    ]);
    expect(live.filesChanged).toEqual(['/home/dev/work/repo/a.txt', '/home/dev/work/repo/new.txt']);
    expect(live.tokens).toBe(8400 + 2100);
  });

  it('claude: every tool is a step; tokens count each assistant message once, then the results', () => {
    const live = reduce(claudeVendor, 'claude-tool-use.jsonl').live!;
    expect(live.step).toBe('running echo hi from bash > b.txt; cat b.txt');
    expect(live.filesChanged).toEqual([]);
    // The result's summed usage (2,000 + 100 + 200 in, 70 out) outgrows the per-message count.
    expect(live.tokens).toBe(2370);
  });
});

describe('status lines', () => {
  const live = {
    step: 'running npm test',
    recentSteps: ['running npm ci', 'running npm test'],
    filesChanged: ['src/a.ts', 'src/b.ts'],
    tokens: 12_400,
  };

  it('running: elapsed, step, files, tokens; progress adds the recent steps and the file names', () => {
    expect(statusText({ status: 'running', elapsedMs: 65_000, live, detail: false })).toBe(
      'running · 1m 05s · step: running npm test · 2 files changed · 12,400 tokens',
    );
    expect(
      statusText({
        status: 'running',
        elapsedMs: 3_000,
        live: { recentSteps: [], filesChanged: [], tokens: 0 },
        detail: true,
      }),
    ).toBe('running · 3s');
    expect(statusText({ status: 'running', elapsedMs: 65_000, live, detail: true }).split('\n')).toEqual([
      'running · 1m 05s · step: running npm test · 2 files changed · 12,400 tokens',
      'recent steps:',
      '- running npm ci',
      '- running npm test',
      'files: src/a.ts, src/b.ts',
    ]);
  });

  it('ended: how, how long, the final usage; a failure names its reason', () => {
    const usage = { inputTokens: 8_400, cachedInputTokens: 0, outputTokens: 1_200 };
    expect(statusText({ status: 'completed', elapsedMs: 72_000, live, usage, detail: false })).toBe(
      'completed · 1m 12s · 2 files changed · 9,600 tokens (8,400 in, 1,200 out)',
    );
    expect(
      statusText({
        status: 'failed',
        reason: 'timeout',
        elapsedMs: 1_800_000,
        live: undefined,
        usage: null,
        detail: false,
      }),
    ).toBe('failed (timeout) · 30m 00s');
  });

  it('fits the platform limit by cutting the started text, never the status', () => {
    const fitted = fitStatus('x'.repeat(3000), 'running · 3s', 2000);
    expect(fitted.length).toBeLessThanOrEqual(2000);
    expect(fitted.endsWith('…\nrunning · 3s')).toBe(true);
  });
});

/** A channel that records edits and fails them as told. */
class EditingChannel extends RecordingChannel {
  readonly edits: (MessageEdit & { atMs: number })[] = [];
  readonly editFailures: ChannelSendError[] = [];
  async editMessage(edit: MessageEdit): Promise<void> {
    const failure = this.editFailures.shift();
    if (failure) throw failure;
    this.edits.push({ ...edit, atMs: Date.now() });
  }
}

describe('StatusEditor', () => {
  const run = { id: 'hr_000000000001', origin: { platform: 'telegram', chatId: '42', senderId: '1', messageId: '7' } };
  let channel: EditingChannel;
  let delivered: boolean;
  let editor: StatusEditor;
  let state: number;

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_800_000_000_000 });
    channel = new EditingChannel('telegram', 4096);
    delivered = true;
    state = 0;
    const store = {
      startedDelivery: async (runId: string) =>
        ({
          runId,
          status: delivered ? 'delivered' : 'pending',
          platformMessageIds: delivered ? ['99'] : [],
          body: `[run ${runId}] started · codex · /repo`,
          reshapes: [],
          target: { platform: 'telegram', chatId: '42' },
        }) as unknown as DeliveryRow,
    };
    editor = new StatusEditor({
      store: { outbox: store },
      adapters: new Map([['telegram', channel]]),
      clock: systemClock,
      logger: silentLogger(),
      intervalMs: 5_000,
    });
  });

  afterEach(() => {
    editor.stop();
    vi.useRealTimers();
  });

  const render = () => `running · state ${state}`;

  it('edits at most once per interval per conversation, each time with the latest state', async () => {
    for (let i = 0; i < 50; i++) {
      state = i;
      editor.update(run, render);
      await vi.advanceTimersByTimeAsync(200); // a burst: 50 changes over 10 s
    }
    await vi.advanceTimersByTimeAsync(10_000);
    expect(channel.edits.length).toBeLessThanOrEqual(4);
    expect(channel.edits.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < channel.edits.length; i++)
      expect(channel.edits[i]!.atMs - channel.edits[i - 1]!.atMs).toBeGreaterThanOrEqual(5_000);
    expect(channel.edits.at(-1)!.text).toBe(`[run ${run.id}] started · codex · /repo\nrunning · state 49`);
    expect(channel.edits[0]).toMatchObject({ chatId: '42', messageId: '99' });
  });

  it('skips edits until the started message is delivered, and never sends an unchanged text', async () => {
    delivered = false;
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(channel.edits).toEqual([]);
    delivered = true;
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(10_000);
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(channel.edits.map((e) => e.text)).toEqual([`[run ${run.id}] started · codex · /repo\nrunning · state 0`]);
  });

  it('holds every edit of the conversation for a rate limit, and gives up on a run after 3 failed edits', async () => {
    channel.editFailures.push(new ChannelSendError('rate_limited', '429', { retryAfterMs: 30_000 }));
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(0);
    const limitedAt = Date.now();
    state = 1;
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(channel.edits).toHaveLength(1);
    expect(channel.edits[0]!.atMs - limitedAt).toBeGreaterThanOrEqual(30_000);

    channel.editFailures.push(...[1, 2, 3].map(() => new ChannelSendError('network', 'down')));
    state = 2;
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(120_000);
    state = 3;
    editor.update(run, render);
    editor.finish(run, () => 'completed');
    await vi.advanceTimersByTimeAsync(120_000);
    // The first 429 counted: after two network failures the run is left alone.
    expect(channel.edits).toHaveLength(1);
  });

  it('stops at the first refusal that will not change (message deleted)', async () => {
    channel.editFailures.push(new ChannelSendError('refused', 'message to edit not found'));
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(10_000);
    state = 1;
    editor.update(run, render);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(channel.edits).toEqual([]);
  });

  it('holds a bounded number of ended runs when runs end in one chat faster than it may edit (the soak backlog), and edits the latest', async () => {
    // 5 runs a second end in one chat that may see one edit per 5 s: before, every ended run
    // waited in line for its last edit, so the editor held them all (~2 KB each in the soak).
    const runs = Array.from({ length: 200 }, (_, i) => ({ ...run, id: `hr_${String(i).padStart(12, '0')}` }));
    for (const each of runs) {
      editor.update(each, render);
      await vi.advanceTimersByTimeAsync(100);
      editor.finish(each, () => 'completed');
      await vi.advanceTimersByTimeAsync(100);
    }
    expect(editor.heldRuns).toBeLessThanOrEqual(11);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(editor.heldRuns).toBe(0);
    const last = runs.at(-1)!.id;
    expect(channel.edits.at(-1)!.text).toBe(`[run ${last}] started · codex · /repo\ncompleted`);
  });

  it('makes no edit on a channel that cannot edit, or with status_edit_seconds = 0', () => {
    expect(editor.enabledFor('telegram')).toBe(true);
    expect(
      new StatusEditor({
        store: { outbox: { startedDelivery: async () => undefined } },
        adapters: new Map([['terminal', new RecordingChannel('terminal')]]),
        clock: systemClock,
        logger: silentLogger(),
        intervalMs: 5_000,
      }).enabledFor('terminal'),
    ).toBe(false);
    expect(
      new StatusEditor({
        store: { outbox: { startedDelivery: async () => undefined } },
        adapters: new Map([['telegram', channel]]),
        clock: systemClock,
        logger: silentLogger(),
        intervalMs: 0,
      }).enabledFor('telegram'),
    ).toBe(false);
  });
});
