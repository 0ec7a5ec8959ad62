/**
 * The terminal channel (`baton ask`): messages for the conversation are handed to a callback
 * (printed, or collected for `--json`) instead of a chat platform.
 */
import { toPlainText } from '../../delivery/chat-markdown.js';
import type { ChannelAdapter, ChannelState, InboundHandler, OutboundMessage } from '../types.js';

/** A channel whose "chat" is the terminal that ran `baton ask`. */
export class TerminalAdapter implements ChannelAdapter {
  readonly platform = 'terminal' as const;
  /** A terminal has no message size limit worth splitting at; 1 MiB of UTF-16 units. */
  readonly maxMessageLength = 1_048_576;
  private nextId = 1;

  /** @param write - receives each message's text and the conversation (chat id) it belongs to. */
  constructor(private readonly write: (text: string, chatId: string) => void) {}

  async start(_handler: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}
  status(): ChannelState {
    return { state: 'connected' };
  }

  async send(message: OutboundMessage): Promise<{ messageId: string }> {
    // A terminal shows no markup: a Markdown body is printed as its words.
    this.write(message.format === 'markdown' ? toPlainText(message.text) : message.text, message.chatId);
    return { messageId: `terminal-${this.nextId++}` };
  }
}
