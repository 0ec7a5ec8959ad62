/**
 * Files through the outbox (issue #13 item 2) on a real database with a recording channel and a
 * manual clock: a long body goes as its first part plus `result.md`; a refused, unreadable or
 * unsupported file gives way to the remaining text parts; a network failure is retried like text;
 * an `always` file follows the text; a waiting row keeps its files across a new Outbox (restart).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { deliveryItems } from '../../src/delivery/delivery-items.js';
import { Outbox, type OutboxPolicy } from '../../src/delivery/outbox.js';
import { splitMessage } from '../../src/delivery/split.js';
import { startDeliveryWorker } from '../../src/delivery/worker.js';
import { RunStore } from '../../src/store/runs-repo.js';
import type { DocumentJson } from '../../src/store/schema.js';
import { RecordingChannel } from '../fakes/recording-channel.js';
import { useTestDatabase, testEngine } from '../support/database.js';
import { ManualClock } from '../support/clock.js';

const policy: OutboxPolicy = {
  backoffBaseMs: 30_000,
  backoffCapMs: 1_800_000,
  maxAttempts: 5,
  maxAgeMs: 24 * 3_600_000,
};
const target = { platform: 'telegram', chatId: '42', replyToMessageId: '7' };
const MAX = 200;

const database = useTestDatabase();
let store: RunStore;
let dir: string;

beforeAll(async () => {
  store = new RunStore(database.db);
  dir = await mkdtemp(join(tmpdir(), 'baton-outbox-docs-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function setup(options: { documents?: boolean } = {}) {
  const clock = new ManualClock(Date.parse('2026-11-29T10:00:00Z'));
  const channel = new RecordingChannel('telegram', MAX);
  if (options.documents === false) Object.defineProperty(channel, 'sendDocument', { value: undefined });
  const outbox = new Outbox({
    store,
    clock,
    logger: silentLogger(),
    adapters: new Map([['telegram', channel]]),
    policy,
  });
  const worker = startDeliveryWorker({ store, outbox, clock, logger: silentLogger(), tickMs: 3_600_000 });
  return { clock, channel, outbox, worker };
}

/** A body of `lines` numbered lines, with a run tag. */
function body(lines: number): string {
  return [
    '[run hr_0123456789ab] completed',
    ...Array.from({ length: lines }, (_, i) => `line ${i + 1} ${'y'.repeat(40)}`),
  ].join('\n');
}

async function resultFile(
  text: string,
  name = `result-${Math.random().toString(36).slice(2)}.md`,
): Promise<DocumentJson> {
  const path = join(dir, name);
  await writeFile(path, text, { mode: 0o600 });
  return {
    path,
    filename: 'result.md',
    use: 'long_body',
    caption: '[run hr_0123456789ab] The whole answer: result.md',
  };
}

describe(`outbox files (${testEngine})`, () => {
  it('sends a body of more than three parts as its first part, then result.md with the whole body', async () => {
    const { channel, outbox, worker } = setup();
    try {
      const text = body(40);
      expect(splitMessage(text, MAX).length).toBeGreaterThan(3);
      const row = await outbox.send({
        runId: null,
        kind: 'outcome',
        target,
        body: text,
        documents: [await resultFile(text)],
      });
      expect(channel.order).toEqual(['text:[run hr_0123456789ab] completed', 'file:result.md']);
      expect(channel.documents[0]!.content.toString('utf8')).toBe(text);
      expect(channel.documents[0]!.replyToMessageId).toBe('7');
      expect(text.startsWith(channel.sent[0]!.text)).toBe(true);
      const stored = await store.outbox.getDelivery(row.id);
      expect(stored?.status).toBe('delivered');
      expect(stored?.platformMessageIds).toHaveLength(2);
    } finally {
      await worker.stop();
    }
  });

  it('sends a body of three parts or fewer as text, without the file', async () => {
    const { channel, outbox, worker } = setup();
    try {
      const text = body(8);
      const parts = splitMessage(text, MAX).length;
      expect(parts).toBeGreaterThan(1);
      expect(parts).toBeLessThanOrEqual(3);
      await outbox.send({ runId: null, kind: 'outcome', target, body: text, documents: [await resultFile(text)] });
      expect(channel.documents).toEqual([]);
      expect(channel.sent).toHaveLength(parts);
    } finally {
      await worker.stop();
    }
  });

  it('falls back to the remaining text parts when the platform refuses the file', async () => {
    const { channel, outbox, worker } = setup();
    try {
      const text = body(40);
      channel.documentFailures.push({ kind: 'refused' });
      const row = await outbox.send({
        runId: null,
        kind: 'outcome',
        target,
        body: text,
        documents: [await resultFile(text)],
      });
      const parts = splitMessage(text, MAX);
      expect(channel.documents).toEqual([]);
      expect(channel.sent.map((m) => m.text)).toEqual(parts);
      const stored = await store.outbox.getDelivery(row.id);
      expect(stored?.status).toBe('delivered');
      expect(stored?.documents[0]?.refused).toBe(true);
      expect(stored?.attempts).toBe(0);
    } finally {
      await worker.stop();
    }
  });

  it('falls back to text when the adapter sends no files, or the file is gone from disk', async () => {
    for (const variant of ['no adapter support', 'file gone'] as const) {
      const { channel, outbox, worker } = setup({ documents: variant !== 'no adapter support' });
      try {
        const text = body(40);
        const document = await resultFile(text);
        if (variant === 'file gone') await rm(document.path);
        await outbox.send({ runId: null, kind: 'outcome', target, body: text, documents: [document] });
        expect(
          channel.sent.map((m) => m.text),
          variant,
        ).toEqual(splitMessage(text, MAX));
      } finally {
        await worker.stop();
      }
    }
  });

  it('retries a file after a network failure like any message, without resending the first part', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      const text = body(40);
      channel.documentFailures.push({ kind: 'network' });
      const row = await outbox.send({
        runId: null,
        kind: 'outcome',
        target,
        body: text,
        documents: [await resultFile(text)],
      });
      expect(channel.order).toEqual(['text:[run hr_0123456789ab] completed']);
      const waiting = await store.outbox.getDelivery(row.id);
      expect(waiting).toMatchObject({ status: 'pending', attempts: 1, partsDelivered: 1 });
      clock.advance(30_000);
      expect(await worker.tick()).toBe(1);
      expect(channel.order).toEqual(['text:[run hr_0123456789ab] completed', 'file:result.md']);
      expect((await store.outbox.getDelivery(row.id))?.status).toBe('delivered');
    } finally {
      await worker.stop();
    }
  });

  it('gives up on the file at the last attempt and sends the text instead of dead-lettering', async () => {
    const { clock, channel, outbox, worker } = setup();
    try {
      await worker.tick();
      const text = body(40);
      for (let i = 0; i < policy.maxAttempts; i++) channel.documentFailures.push({ kind: 'network' });
      const row = await outbox.send({
        runId: null,
        kind: 'outcome',
        target,
        body: text,
        documents: [await resultFile(text)],
      });
      for (let attempt = 2; attempt <= policy.maxAttempts; attempt++) {
        clock.advance(1_800_000);
        await worker.tick();
      }
      const stored = await store.outbox.getDelivery(row.id);
      expect(stored?.status).toBe('delivered');
      expect(channel.sent.map((m) => m.text)).toEqual(splitMessage(text, MAX));
    } finally {
      await worker.stop();
    }
  });

  it('sends an `always` file after the text, and a new Outbox (a restart) resumes a waiting row with its files', async () => {
    const first = setup();
    const patchPath = join(dir, 'hr_0123456789ab.patch');
    await writeFile(patchPath, 'diff --git a/x b/x\n');
    const patch: DocumentJson = { path: patchPath, filename: 'hr_0123456789ab.patch', use: 'always' };
    let rowId: number;
    try {
      await first.worker.tick();
      first.channel.documentFailures.push({ kind: 'network' });
      const text = body(2);
      const row = await first.outbox.send({
        runId: null,
        kind: 'outcome',
        target,
        body: text,
        documents: [await resultFile(text), patch],
      });
      rowId = row.id;
      expect(first.channel.order).toEqual(['text:[run hr_0123456789ab] completed']);
    } finally {
      await first.worker.stop();
    }
    const second = setup();
    try {
      second.clock.advance(30_000);
      await second.worker.tick();
      expect(second.channel.order).toEqual(['file:hr_0123456789ab.patch']);
      expect(second.channel.documents[0]!.content.toString()).toBe('diff --git a/x b/x\n');
      expect((await store.outbox.getDelivery(rowId))?.status).toBe('delivered');
    } finally {
      await second.worker.stop();
    }
  });

  it('lays out items deterministically: a refused result.md turns into the remaining parts at the same index', () => {
    const text = body(40);
    const long: DocumentJson = { path: '/x', filename: 'result.md', use: 'long_body' };
    const patch: DocumentJson = { path: '/y', filename: 'p.patch', use: 'always' };
    const before = deliveryItems({ body: text, reshapes: [], documents: [long, patch] }, MAX);
    expect(before.map((i) => i.kind)).toEqual(['text', 'document', 'document']);
    const after = deliveryItems({ body: text, reshapes: [], documents: [{ ...long, refused: true }, patch] }, MAX);
    const parts = splitMessage(text, MAX);
    expect(after.map((i) => (i.kind === 'text' ? i.text : i.document.filename))).toEqual([...parts, 'p.patch']);
  });
});
