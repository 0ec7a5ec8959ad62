/**
 * The terminal channel's conversations: each owner command (`baton runs|cancel|stop`) and each
 * `baton ask` is a conversation of its own (a chat id), and the replies the outbox sends to it
 * go to whoever listens on that chat id. The service and a lone `baton ask` share this.
 */
import { randomUUID } from 'node:crypto';
import { TerminalAdapter } from '../channels/terminal/adapter.js';
import type { InboundMessage } from '../channels/types.js';
import type { DispatchResult } from '../dispatch/dispatcher.js';

/** What a terminal conversation talks to: the dispatcher's inbound side. */
export interface TerminalDispatch {
  handle(message: InboundMessage): Promise<DispatchResult>;
}

/** The fields of a terminal message that differ between its uses. */
export interface TerminalMessageFields {
  chatId: string;
  dedupeKey: string;
  messageId: string;
  senderName: string;
  text: string;
  receivedAt: Date;
  attachments?: InboundMessage['attachments'];
}

/** A message of the owner typed at this machine's terminal (trusted as the owner). */
export function terminalMessage(fields: TerminalMessageFields): InboundMessage {
  return {
    platform: 'terminal',
    dedupeKey: fields.dedupeKey,
    chatId: fields.chatId,
    isDirect: true,
    messageId: fields.messageId,
    senderId: 'owner',
    senderName: fields.senderName,
    senderIsBot: false,
    text: fields.text,
    ...(fields.attachments ? { attachments: fields.attachments } : {}),
    receivedAt: fields.receivedAt,
  };
}

/** Routes the terminal adapter's messages to the conversation (chat id) they belong to. */
export class TerminalConversations {
  private readonly listeners = new Map<string, (text: string) => void>();
  /** The adapter the outbox sends the terminal's messages through. */
  readonly adapter: TerminalAdapter;

  /** @param unclaimed - gets the messages of chat ids nobody listens on. @default dropped */
  constructor(unclaimed?: (text: string, chatId: string) => void) {
    this.adapter = new TerminalAdapter((text, chatId) => {
      const listener = this.listeners.get(chatId);
      if (listener) listener(text);
      else unclaimed?.(text, chatId);
    });
  }

  /** Hands each message of `chatId` to `listener` until the returned function is called. */
  listen(chatId: string, listener: (text: string) => void): () => void {
    this.listeners.set(chatId, listener);
    return () => void this.listeners.delete(chatId);
  }

  /**
   * Runs one owner command from the CLI (`/runs`, `/cancel ID`, `/stop`) in a conversation of its
   * own and returns its replies.
   *
   * @throws whatever the dispatcher throws (database unavailable).
   */
  async runOwnerCommand(dispatch: TerminalDispatch, text: string, now: () => Date): Promise<string[]> {
    const chatId = `admin-${randomUUID()}`;
    const replies: string[] = [];
    const stop = this.listen(chatId, (reply) => replies.push(reply));
    try {
      await dispatch.handle(
        terminalMessage({
          chatId,
          dedupeKey: chatId,
          messageId: chatId,
          senderName: 'baton CLI',
          text,
          receivedAt: now(),
        }),
      );
      return replies;
    } finally {
      stop();
    }
  }
}
