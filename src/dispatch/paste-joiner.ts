/**
 * Joins a long paste that the chat app split into several messages (Telegram clients cut at
 * 4096 characters) back into one message before it is dispatched: a message that reaches its
 * platform's split length is held for `waitMs`, and the same sender's next messages in that
 * conversation are appended while each of them also reaches the split length (the last, shorter
 * part ends the paste). The same sender's next message within the wait is a part whatever it
 * starts with (a part beginning with `/` is a cut path, not a command); anything else in the
 * conversation (another sender) first releases what is held, so the conversation's order is kept. While a paste is held the inbox
 * still has its Telegram updates, so a crash then loses nothing.
 */
import { ConversationQueue } from '../channels/conversation-queue.js';
import { conversationOf, PLATFORM_ABILITIES, type InboundMessage, type Platform } from '../channels/types.js';
import type { Logger } from '../core/logger.js';

/** Where chat apps split a long paste: each platform's `clientSplitLength` (see channels/types.ts). */
export const CLIENT_SPLIT_LENGTHS: Readonly<Partial<Record<Platform, number>>> = Object.fromEntries(
  Object.entries(PLATFORM_ABILITIES).flatMap(([platform, abilities]) =>
    abilities.clientSplitLength === undefined ? [] : [[platform, abilities.clientSplitLength]],
  ),
);

/** Characters a client's cut may lose (trimmed whitespace) or a stripped `@botname` may take. */
const SPLIT_MARGIN = 256;

/** Options of the {@link PasteJoiner}. */
export interface PasteJoinerOptions {
  /** Where complete messages go (the dispatcher). */
  handle: (message: InboundMessage) => Promise<unknown>;
  /**
   * Length, in UTF-16 units, at which a platform's clients split a message; a platform absent here
   * is never held. @default {@link CLIENT_SPLIT_LENGTHS}
   */
  splitLengths?: Partial<Record<Platform, number>>;
  /** How long to wait for the next part, in ms; 0 disables joining. @default 1500 ([harness] paste_join_ms) */
  waitMs: number;
  logger: Logger;
  /**
   * Messages handed on at once, ahead of the conversation's earlier ones still being handled
   * (`/stop`, `/cancel`), unless they may be a part of a paste held now. @default none
   */
  overtakes?: (message: InboundMessage) => boolean;
}

interface Held {
  parts: InboundMessage[];
  timer: NodeJS.Timeout;
}

/** The joiner; put it between the channels and the dispatcher. */
export class PasteJoiner {
  private readonly queue = new ConversationQueue();
  private readonly held = new Map<string, Held>();

  constructor(private readonly options: PasteJoinerOptions) {}

  /**
   * Takes one inbound message. Resolves once it is dispatched, or at once when it is held as
   * part of a paste (that part is dispatched when the paste ends; failures are logged).
   */
  handle(message: InboundMessage): Promise<void> {
    const key = conversationKeyOf(message);
    const held = this.held.get(key);
    if (this.options.overtakes?.(message) && (!held || held.parts[0]!.senderId !== message.senderId)) {
      return this.options.handle(message).then(() => undefined);
    }
    let heldNow = false;
    const done = this.queue.run(key, async () => {
      const held = this.held.get(key);
      // The split's own rules decide, before any command is read: a client cuts wherever the
      // limit falls, so a next part may well begin with `/` (a path such as `/etc/hosts`).
      if (held && held.parts[0]!.senderId === message.senderId) {
        held.parts.push(message);
        clearTimeout(held.timer);
        if (this.reachesSplit(message)) {
          held.timer = this.schedule(key);
          heldNow = true;
          return;
        }
        await this.flush(key);
        return;
      }
      if (held) await this.flush(key);
      if (this.options.waitMs > 0 && this.reachesSplit(message)) {
        this.held.set(key, { parts: [message], timer: this.schedule(key) });
        heldNow = true;
        return;
      }
      await this.options.handle(message);
    });
    return done.then(() => {
      if (heldNow)
        this.options.logger.debug(
          { platform: message.platform, chatId: message.chatId },
          'holding a long message for the rest of a split paste',
        );
    });
  }

  private reachesSplit(message: InboundMessage): boolean {
    const limit = (this.options.splitLengths ?? CLIENT_SPLIT_LENGTHS)[message.platform];
    return limit !== undefined && message.text.length >= limit - SPLIT_MARGIN;
  }

  private schedule(key: string): NodeJS.Timeout {
    return setTimeout(() => {
      this.queue
        .run(key, () => this.flush(key))
        .catch((err: unknown) => this.options.logger.error({ err }, 'dispatching a joined paste failed'));
    }, this.options.waitMs);
  }

  private async flush(key: string): Promise<void> {
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    clearTimeout(held.timer);
    await this.options.handle(joinParts(held.parts));
  }
}

/**
 * One message from the parts of a paste: the first part's identity, the texts joined with a line
 * break (the client's cut dropped the whitespace there, if any), and the later parts' dedupe keys.
 */
export function joinParts(parts: readonly InboundMessage[]): InboundMessage {
  const [first, ...rest] = parts;
  if (!first) throw new RangeError('joinParts needs at least one part');
  if (rest.length === 0) return first;
  return {
    ...first,
    text: parts.map((p) => p.text).join('\n'),
    continuationKeys: rest.map((p) => p.dedupeKey),
  };
}

function conversationKeyOf(message: InboundMessage): string {
  const { platform, chatId, threadId } = conversationOf(message);
  return `${platform}:${chatId}:${threadId ?? ''}`;
}
