/**
 * A pressed message's buttons give way to what the press did: the message is edited (Telegram
 * `editMessageText`, Slack `chat.update`, Discord message edit, through each adapter's
 * `editMessage`) to its text as sent plus one line with the decision, and no buttons. Best
 * effort: the press has already acted and been answered; a failed edit is logged.
 */
import type { ChannelAdapter, Platform } from '../channels/types.js';
import type { Logger } from '../core/logger.js';
import type { PressClaims, PressedMessage } from '../store/press-claims.js';
import { layoutParts } from './delivery-items.js';

/** Dependencies of {@link PressSettler}. */
export interface PressSettlerDeps {
  claims: Pick<PressClaims, 'deliveryOf'>;
  /** Started adapters by platform (the outbox's map); a platform without `editMessage` keeps its buttons. */
  adapters: ReadonlyMap<Platform, ChannelAdapter>;
  logger: Logger;
}

/** Replaces a pressed message's buttons with the decision. */
export class PressSettler {
  constructor(private readonly deps: PressSettlerDeps) {}

  /** Edits `message` (which baton sent) to its sent text, then `line`, without buttons. */
  async settle(message: PressedMessage & { threadId?: string | undefined }, line: string): Promise<void> {
    const { deps } = this;
    const adapter = deps.adapters.get(message.platform as Platform);
    if (!adapter?.editMessage) return;
    try {
      const row = await deps.claims.deliveryOf(message);
      if (!row) {
        deps.logger.debug(
          { platform: message.platform, messageId: message.messageId },
          'pressed message not found among deliveries; its buttons stay',
        );
        return;
      }
      const parts = layoutParts(row.body, adapter.maxMessageLength, row.reshapes);
      const base = parts[row.platformMessageIds.indexOf(message.messageId)] ?? parts.at(-1) ?? row.body;
      const tail = `\n\n${line}`;
      // The decision line always shows: the sent text gives way if both do not fit one message.
      const text =
        base.length + tail.length <= adapter.maxMessageLength
          ? `${base}${tail}`
          : `${base.slice(0, Math.max(0, adapter.maxMessageLength - tail.length - 1))}…${tail}`;
      await adapter.editMessage({
        chatId: message.chatId,
        ...(message.threadId ? { threadId: message.threadId } : {}),
        messageId: message.messageId,
        text,
      });
    } catch (err) {
      deps.logger.warn(
        {
          platform: message.platform,
          messageId: message.messageId,
          err: err instanceof Error ? err.message : String(err),
        },
        'could not replace the buttons of a pressed message; the press has acted',
      );
    }
  }
}
