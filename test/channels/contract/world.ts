/**
 * The service around one adapter for the channel contract: its messages and presses go to the real
 * dispatcher, its sends come from the real outbox, both on a real database
 * (test/support/harness.ts), wired as the service wires a channel (the inbox included).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { ChannelAdapter, InboundMessage, Platform } from '../../../src/channels/types.js';
import type { ButtonJson } from '../../../src/core/buttons.js';
import type { DispatchResult } from '../../../src/dispatch/dispatcher.js';
import type { DeliveryRow, DocumentJson } from '../../../src/store/schema.js';
import { createHarness, type TestHarness } from '../../support/harness.js';
import type { ChannelDriver, InjectedEvent } from './driver.js';

/** Upper bound of a wait for a condition, in ms (a hang guard, not a speed bound). */
export const WAIT_MS = 30_000;

/** One message an adapter handed over, and what the dispatcher did with it. */
export interface Handled {
  message: InboundMessage;
  result: Promise<DispatchResult>;
}

/** `[harness]`, the workspace and the channel's trust lists, as config.toml says them. */
function configToml(root: string, platform: Platform, trust: ChannelDriver['trust']): string {
  const lines = ['[harness]', 'approved = true', '[workspace]', `roots = [${JSON.stringify(root)}]`];
  if (trust && platform !== 'terminal') {
    lines.push(`[channels.${platform}]`, `owner_user_id = ${JSON.stringify(trust.owner)}`);
    lines.push(`allowed_user_ids = [${JSON.stringify(trust.guest)}]`);
  }
  return `${lines.join('\n')}\n`;
}

/** A started channel in its service, and what the contract cases observe of it. */
export class ContractWorld {
  private constructor(
    readonly driver: ChannelDriver,
    readonly harness: TestHarness,
    readonly adapter: ChannelAdapter,
    /** A directory for the files a case sends. */
    readonly scratch: string,
    /** Every message the adapter handed over, in order. */
    readonly handled: Handled[],
    /** What the dispatcher did with every press the adapter handed over, in order. */
    readonly presses: Promise<DispatchResult>[],
  ) {}

  /** Starts the fake platform, the service parts and the adapter; resolves once it is connected. */
  static async start(driver: ChannelDriver): Promise<ContractWorld> {
    await driver.startPlatform();
    const adapters = new Map<Platform, ChannelAdapter>();
    const harness = await createHarness({
      adapters,
      replaceConfig: ({ root }) => configToml(root, driver.platform, driver.trust),
    });
    const handled: Handled[] = [];
    const presses: Promise<DispatchResult>[] = [];
    const { store, dispatcher, supervisor } = harness;
    const adapter = await driver.startAdapter({
      handler: async (message) => {
        const result = dispatcher.handle(message);
        handled.push({ message, result });
        await result;
      },
      presses: async (press) => {
        const result = dispatcher.handlePress(press);
        presses.push(result);
        await result;
      },
      inbox: {
        recordInbox: (platform, updates) => store.inbox.recordInbox(platform, updates),
        receivedInbound: (platform) => store.inbox.receivedInbound(platform),
        forgetInbound: (platform, dedupeKey) => store.inbox.forgetInbound(platform, dedupeKey),
        releaseOwnClaims: (platform, inFlight) =>
          store.inbox.releaseClaimsOf(platform, supervisor.supervisorId, inFlight),
      },
    });
    adapters.set(driver.platform, adapter);
    const scratch = await mkdtemp(join(tmpdir(), 'baton-contract-'));
    return new ContractWorld(driver, harness, adapter, scratch, handled, presses);
  }

  async dispose(): Promise<void> {
    await this.driver.stop();
    await this.harness.dispose();
    await rm(this.scratch, { recursive: true, force: true });
  }

  /** Texts the platform received in answer to `event`. */
  repliesTo(event: InjectedEvent): string[] {
    return this.driver
      .sent()
      .filter((s) => s.replyTo === event.messageId)
      .map((s) => s.text);
  }

  /** Waits until `event` was answered; @returns the answers' texts. */
  async answered(event: InjectedEvent): Promise<string[]> {
    await expect.poll(() => this.repliesTo(event).length, { timeout: WAIT_MS }).toBeGreaterThan(0);
    return this.repliesTo(event);
  }

  /** Waits until every message and press handed over so far has been acted on (or refused). */
  async settled(): Promise<void> {
    await Promise.all([...this.handled.map((h) => h.result), ...this.presses]);
  }

  /** What the dispatcher did with each handing-over of `event` (none: the adapter dropped it). */
  async resultsOf(event: InjectedEvent): Promise<DispatchResult['kind'][]> {
    const mine = this.handled.filter((h) => h.message.messageId === event.messageId);
    return (await Promise.all(mine.map((h) => h.result))).map((r) => r.kind);
  }

  /** Waits until the adapter handed `event` over; @returns the message it made of it. */
  async handedOver(event: InjectedEvent): Promise<InboundMessage> {
    const find = (): Handled | undefined => this.handled.find((h) => h.message.messageId === event.messageId);
    await expect.poll(() => find() !== undefined, { timeout: WAIT_MS }).toBe(true);
    return find()!.message;
  }

  /**
   * Asserts `event` got no answer and changed nothing. Silence is shown by an answered marker:
   * `marker` is a later event of the same conversation, handled after `event` because a channel
   * keeps a conversation's order.
   */
  async expectSilence(event: InjectedEvent, marker: InjectedEvent): Promise<void> {
    await this.answered(marker);
    await this.settled();
    expect(this.repliesTo(event)).toEqual([]);
    for (const kind of await this.resultsOf(event)) expect(kind).toBe('ignored');
    expect(await this.harness.store.runs.recentRuns(10)).toEqual([]);
  }

  /** Sends `body` to the owner's conversation through the outbox; @returns the row as stored after. */
  async send(body: string, extra: { buttons?: ButtonJson[]; documents?: DocumentJson[] } = {}): Promise<DeliveryRow> {
    const target = this.driver.ownerTarget();
    const row = await this.harness.outbox.send({ runId: null, kind: 'reply', target, body, ...extra });
    return (await this.harness.store.outbox.getDelivery(row.id))!;
  }
}
