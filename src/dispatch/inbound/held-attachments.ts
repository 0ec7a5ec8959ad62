/** Files sent without a command, kept for the same sender's next launch in that conversation. */
import type { IncomingAttachment, InboundMessage } from '../../channels/types.js';
import type { Clock } from '../../core/clock.js';
import { heldKey } from './held-key.js';

/** How long files sent without a command wait for the next launch, in ms. */
export const HOLD_ATTACHMENTS_MS = 10 * 60_000;

/**
 * Files sent without a command, by conversation and sender. In memory: a restart within the
 * hold forgets them (the owner sends them again).
 */
export class HeldAttachments {
  private readonly held = new Map<string, { attachments: IncomingAttachment[]; untilMs: number }>();

  constructor(private readonly clock: Pick<Clock, 'nowMs'>) {}

  /** Keeps files sent without a command for the same sender's next launch in this conversation. */
  hold(message: InboundMessage, attachments: readonly IncomingAttachment[]): void {
    const key = heldKey(message);
    const nowMs = this.clock.nowMs();
    // Files nobody launched with expire; drop them so the map stays small.
    for (const [other, entry] of this.held) if (entry.untilMs <= nowMs) this.held.delete(other);
    const held = this.held.get(key);
    const kept = held && held.untilMs > nowMs ? held.attachments : [];
    this.held.set(key, { attachments: [...kept, ...attachments], untilMs: nowMs + HOLD_ATTACHMENTS_MS });
  }

  /** The files held for this sender and conversation (and forgets them), unless they expired. */
  take(message: InboundMessage): IncomingAttachment[] {
    const key = heldKey(message);
    const held = this.held.get(key);
    this.held.delete(key);
    return held && held.untilMs > this.clock.nowMs() ? held.attachments : [];
  }
}
