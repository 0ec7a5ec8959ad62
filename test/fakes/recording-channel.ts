/**
 * An in-process channel adapter that records what it is asked to send and can be told to fail,
 * for outbox and dispatcher tests. Platform SDK behaviour is covered by the E2E tests.
 */
import { toPlainText } from '../../src/delivery/chat-markdown.js';
import {
  ChannelSendError,
  type ChannelAdapter,
  type ChannelState,
  type InboundHandler,
  type OutboundDocument,
  type OutboundMessage,
  type Platform,
  type SendFailureKind,
} from '../../src/channels/types.js';

/**
 * A recording adapter; `failures` are consumed one per send, in order. A `markdown` message is
 * recorded as a reader sees it, its `text` the plain words ({@link toPlainText}), with the text as
 * sent in `markdown`.
 */
export class RecordingChannel implements ChannelAdapter {
  readonly sent: (OutboundMessage & { markdown?: string })[] = [];
  readonly failures: { kind: SendFailureKind; retryAfterMs?: number }[] = [];
  /** Files sent (issue #13), in order. */
  readonly documents: OutboundDocument[] = [];
  /** Failures of `sendDocument`, consumed one per call, in order. */
  readonly documentFailures: { kind: SendFailureKind; retryAfterMs?: number }[] = [];
  /** What was sent, in order: `text:<first line>` or `file:<name>`. */
  readonly order: string[] = [];
  private nextId = 1;

  constructor(
    readonly platform: Platform = 'telegram',
    readonly maxMessageLength = 4096,
  ) {}

  async start(_handler: InboundHandler): Promise<void> {}
  async stop(): Promise<void> {}
  status(): ChannelState {
    return { state: 'connected' };
  }

  async send(message: OutboundMessage): Promise<{ messageId: string }> {
    const failure = this.failures.shift();
    if (failure) {
      throw new ChannelSendError(
        failure.kind,
        `injected ${failure.kind}`,
        failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs },
      );
    }
    this.sent.push(
      message.format === 'markdown' ? { ...message, text: toPlainText(message.text), markdown: message.text } : message,
    );
    this.order.push(`text:${message.text.split('\n')[0]}`);
    return { messageId: String(this.nextId++) };
  }

  async sendDocument(document: OutboundDocument): Promise<{ messageId: string }> {
    const failure = this.documentFailures.shift();
    if (failure) {
      throw new ChannelSendError(
        failure.kind,
        `injected ${failure.kind}`,
        failure.retryAfterMs === undefined ? {} : { retryAfterMs: failure.retryAfterMs },
      );
    }
    this.documents.push(document);
    this.order.push(`file:${document.filename}`);
    return { messageId: String(this.nextId++) };
  }

  /** Resolves once a sent text matches, polling every 10 ms for up to `timeoutMs`. */
  async waitForText(pattern: RegExp, timeoutMs = 100_000): Promise<OutboundMessage> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.sent.find((m) => pattern.test(m.text));
      if (hit) return hit;
      if (Date.now() > end)
        throw new Error(`no message matched ${pattern}; sent:\n${this.sent.map((m) => m.text).join('\n---\n')}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
