/**
 * Indexes what baton sent to the fake Bot API by the message it replied to, with the time the
 * bench first saw each message (polled, so within a few ms of its arrival).
 */
import type { FakeTelegram } from '../../fakes/fake-telegram.js';
import { replyTargetOf, runIdIn, TERMINAL_PATTERN } from './world.js';

/** One message baton sent. */
export interface SeenMessage {
  text: string;
  /** `performance.now()` when the bench saw it. */
  atMs: number;
  runId: string | undefined;
  kind: 'started' | 'terminal' | 'notice' | 'other';
  /** For a terminal message: completed, failed, interrupted… */
  status?: string;
}

/** The index; call {@link SentIndex.scan} before reading. */
export class SentIndex {
  private seen = 0;
  private readonly byReply = new Map<number, SeenMessage[]>();
  readonly all: SeenMessage[] = [];

  constructor(private readonly telegram: FakeTelegram) {}

  /** Takes in messages sent since the last scan. */
  scan(): void {
    const { sent } = this.telegram;
    const now = performance.now();
    while (this.seen < sent.length) {
      const body = sent[this.seen++]!;
      const runId = runIdIn(body.text);
      const terminal = TERMINAL_PATTERN.exec(body.text);
      const message: SeenMessage = {
        text: body.text,
        atMs: now,
        runId,
        kind: terminal ? 'terminal' : runId && body.text.includes('] started') ? 'started' : runId ? 'notice' : 'other',
        ...(terminal ? { status: terminal[1]! } : {}),
      };
      this.all.push(message);
      const target = replyTargetOf(body);
      if (target === undefined) continue;
      const list = this.byReply.get(target) ?? [];
      list.push(message);
      this.byReply.set(target, list);
    }
  }

  /** Messages replying to `messageId`, oldest first. */
  repliesTo(messageId: number): readonly SeenMessage[] {
    return this.byReply.get(messageId) ?? [];
  }
}
