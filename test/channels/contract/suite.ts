/**
 * The channel contract: the cases every channel adapter passes, against its driver (./driver.ts),
 * in the service around it (./world.ts). A case whose capability the channel lacks asserts the
 * channel's fallback instead.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/core/clock.js';
import { silentLogger } from '../../../src/core/logger.js';
import { StatusEditor } from '../../../src/delivery/status-editor.js';
import { GUEST_REFUSAL } from '../../../src/dispatch/trust.js';
import { RATE_LIMIT_RETRY_AFTER_MS, type ChannelDriver, type SendFailure } from './driver.js';
import { ContractWorld, WAIT_MS } from './world.js';

/** The outbox's first retry delay here (the service's), in ms. */
const BACKOFF_BASE_MS = 30_000;
/** A run id no run has: a button or command naming it is answered, and nothing changes. */
const NO_RUN = 'hr_000000000000';
const UNKNOWN_RUN_PRESS = 'That run is not known here.';
const OWNER_ONLY_PRESS = 'Only the owner can use these buttons.';

/** The world of the running file; set by the suite's `beforeAll`. */
type World = () => ContractWorld;

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

function ownMessages(driver: ChannelDriver, world: World): void {
  if (!driver.capabilities.ownMessages) {
    it('never reads back what it writes (no own messages)', async () => {
      const before = world().handled.length;
      await world().send('written, never read back');
      await world().settled();
      expect(world().handled.length).toBe(before);
    });
    return;
  }
  it('ignores its own messages', async () => {
    const own = await driver.inject('self', '/whoami');
    await world().expectSilence(own, await driver.inject('owner', '/whoami'));
  });
}

function guestAndStranger(driver: ChannelDriver, world: World): void {
  if (!driver.capabilities.otherPeople) {
    it('has only the owner: no guest refusal', async () => {
      const launch = await driver.inject('guest', '/codex');
      expect((await world().answered(launch)).join('\n')).not.toContain(GUEST_REFUSAL);
    });
    it('has only the owner: no stranger’s silence', async () => {
      expect(await world().answered(await driver.inject('stranger', '/whoami'))).toHaveLength(1);
    });
    return;
  }
  it('refuses a guest’s launch with the guest refusal', async () => {
    const launch = await driver.inject('guest', '/codex write a poem');
    expect(await world().answered(launch)).toEqual([GUEST_REFUSAL]);
    expect(await world().resultsOf(launch)).toEqual(['refused']);
    expect(await world().harness.store.runs.recentRuns(10)).toEqual([]);
  });
  it('gives a stranger silence', async () => {
    const launch = await driver.inject('stranger', '/codex write a poem');
    await world().expectSilence(launch, await driver.inject('stranger', '/whoami'));
  });
}

function duplicates(driver: ChannelDriver, world: World): void {
  if (!driver.capabilities.redelivery) {
    it('has no redelivery: two events with one text both act', async () => {
      const [one, two] = [await driver.inject('owner', '/whoami'), await driver.inject('owner', '/whoami')];
      expect([(await world().answered(one)).length, (await world().answered(two)).length]).toEqual([1, 1]);
    });
    return;
  }
  it('acts once on a duplicate delivery', async () => {
    const first = await driver.inject('owner', '/whoami');
    await world().answered(first);
    await first.redeliver();
    await world().answered(await driver.inject('owner', '/whoami'));
    await world().settled();
    expect(world().repliesTo(first)).toHaveLength(1);
    expect((await world().resultsOf(first)).filter((kind) => kind !== 'duplicate')).toEqual(['answered']);
  });
}

function sendFailures(driver: ChannelDriver, world: World): void {
  const title = driver.capabilities.sendFailures
    ? 'maps a %s send failure to its retry class'
    : 'has no platform to fail a send (%s): it goes at once';
  it.each<SendFailure>(['transient', 'permanent', 'rate_limited'])(title, async (failure) => {
    const before = Date.now();
    if (!driver.capabilities.sendFailures) {
      // Written in process: a send cannot fail at a platform, and goes at once.
      expect(await world().send(`no ${failure} failure here`)).toMatchObject({ status: 'delivered', attempts: 0 });
      return;
    }
    driver.failNextSend(failure);
    const row = await world().send(`fails as ${failure}`);
    expect(row.attempts).toBe(1);
    expect(driver.sent().map((s) => s.text)).not.toContain(`fails as ${failure}`);
    const waitMs = row.nextAttemptAt.getTime() - before;
    if (failure === 'permanent') {
      expect(row).toMatchObject({ status: 'dead', lastError: expect.stringMatching(/^refused: /) });
    } else if (failure === 'transient') {
      expect(row).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/^network: /) });
      expect(waitMs).toBeGreaterThanOrEqual(BACKOFF_BASE_MS);
      expect(waitMs).toBeLessThan(RATE_LIMIT_RETRY_AFTER_MS);
    } else {
      expect(row).toMatchObject({ status: 'pending', lastError: expect.stringMatching(/^rate_limited: /) });
      expect(waitMs).toBeGreaterThanOrEqual(RATE_LIMIT_RETRY_AFTER_MS);
    }
  });
}

function buttons(driver: ChannelDriver, world: World): void {
  const title = driver.capabilities.buttons
    ? 'hands a button press to the dispatcher'
    : 'sends a button’s text alone; the command stands in';
  it(title, async () => {
    const row = await world().send('pick one', { buttons: [{ label: 'Stop', action: 'stop', arg: NO_RUN }] });
    expect(row.status).toBe('delivered');
    const message = driver.sent().find((s) => s.text.includes('pick one'));
    if (!driver.capabilities.buttons) {
      expect(message).toMatchObject({ text: 'pick one', buttons: [] });
      expect(await world().answered(await driver.inject('owner', `/stop ${NO_RUN}`))).toHaveLength(1);
      return;
    }
    expect(message?.buttons).toEqual(['Stop']);
    const answersBefore = driver.pressAnswers().length;
    const answers = (): string[] => driver.pressAnswers().slice(answersBefore);
    // A guest's press changes nothing; the owner's reaches the action, once however often the
    // platform delivers it; a second tap is a press of its own.
    await driver.press(message!.messageId, 'Stop', 'guest');
    await expect.poll(answers, { timeout: WAIT_MS }).toEqual([OWNER_ONLY_PRESS]);
    const press = await driver.press(message!.messageId, 'Stop', 'owner');
    await expect.poll(answers, { timeout: WAIT_MS }).toEqual([OWNER_ONLY_PRESS, UNKNOWN_RUN_PRESS]);
    await press.redeliver();
    await driver.press(message!.messageId, 'Stop', 'owner');
    const once = [OWNER_ONLY_PRESS, UNKNOWN_RUN_PRESS, UNKNOWN_RUN_PRESS];
    await expect.poll(answers, { timeout: WAIT_MS }).toEqual(once);
    await world().settled();
    expect(answers()).toEqual(once);
  });
}

function files(driver: ChannelDriver, world: World): void {
  it('hands a file over as an attachment that downloads', async () => {
    const bytes = Buffer.from('contract file: line one\nline two\n');
    const event = await driver.inject('owner', '', { name: 'notes.txt', bytes });
    const message = await world().handedOver(event);
    expect(message.attachments?.map((a) => a.name)).toEqual(['notes.txt']);
    expect(await readAll(await message.attachments![0]!.open())).toEqual(bytes);
    await world().answered(event);
  });
  it(driver.capabilities.documents ? 'sends a document' : 'sends the text when it sends no files', async () => {
    const path = join(world().scratch, 'result.md');
    const content = Buffer.from('# result\n\nthe whole answer\n');
    await writeFile(path, content);
    const documents = [{ path, filename: 'result.md', use: 'always' as const }];
    const row = await world().send('the answer is in the file', { documents });
    expect(row.status).toBe('delivered');
    expect(driver.sent().map((s) => s.text)).toContain('the answer is in the file');
    if (!driver.capabilities.documents) {
      expect(row.documents.map((d) => d.refused)).toEqual([true]);
      return;
    }
    expect(driver.documents().filter((d) => d.filename === 'result.md')).toEqual([{ filename: 'result.md', content }]);
  });
}

function edits(driver: ChannelDriver, world: World): void {
  const can = driver.capabilities.edits;
  it(can ? 'edits a message it sent (the live status)' : 'has no edits: the live status stays off', async () => {
    const { store } = world().harness;
    const adapters = new Map([[driver.platform, world().adapter]]);
    const editor = new StatusEditor({ store, adapters, clock: systemClock, logger: silentLogger(), intervalMs: 1_000 });
    expect(editor.enabledFor(driver.platform)).toBe(can);
    const { adapter } = world();
    if (!can) {
      expect(adapter.editMessage).toBeUndefined();
      return;
    }
    const { chatId } = driver.ownerTarget();
    const { messageId } = await adapter.send({ chatId, text: 'status: starting' });
    await adapter.editMessage!({ chatId, messageId, text: 'status: running' });
    expect(driver.edits()).toContainEqual({ messageId, text: 'status: running' });
  });
}

/**
 * Defines the contract cases for the channel `makeDriver` drives. Call once per test file.
 *
 * @param makeDriver builds the driver (started before the cases, stopped after them).
 */
export function describeChannelContract(makeDriver: () => ChannelDriver): void {
  const driver = makeDriver();
  let started: ContractWorld | undefined;
  const world: World = () => started!;
  beforeAll(async () => {
    started = await ContractWorld.start(driver);
  });
  afterAll(async () => {
    await (started ? started.dispose() : driver.stop());
  });
  describe(`channel contract: ${driver.platform}`, () => {
    ownMessages(driver, world);
    guestAndStranger(driver, world);
    duplicates(driver, world);
    sendFailures(driver, world);
    buttons(driver, world);
    files(driver, world);
    edits(driver, world);
  });
}
