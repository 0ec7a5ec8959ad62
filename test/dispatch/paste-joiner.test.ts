import { describe, expect, it } from 'vitest';
import type { InboundMessage } from '../../src/channels/types.js';
import { silentLogger } from '../../src/core/logger.js';
import { PasteJoiner } from '../../src/dispatch/paste-joiner.js';
import { waitFor } from '../support/wait.js';

let nextId = 1;
function message(text: string, senderId = '1', chatId = '42'): InboundMessage {
  const id = nextId++;
  return {
    platform: 'telegram',
    dedupeKey: `k${id}`,
    chatId,
    isDirect: true,
    messageId: String(id),
    senderId,
    senderName: 'u',
    senderIsBot: false,
    text,
    receivedAt: new Date(0),
  };
}

function setup(waitMs: number) {
  const handled: InboundMessage[] = [];
  const joiner = new PasteJoiner({ handle: async (m) => void handled.push(m), waitMs, logger: silentLogger() });
  return { handled, joiner };
}

const long = (head: string): string => head + 'p'.repeat(4096 - head.length);

describe('PasteJoiner', () => {
  it('joins a paste split at 4096 characters with its shorter last part, at once', async () => {
    // An hour's wait: only the last, shorter part can end the paste here.
    const { handled, joiner } = setup(3_600_000);
    const first = message(long('/codex '));
    const second = message(long(''));
    const third = message('the end');
    await joiner.handle(first);
    await joiner.handle(second);
    expect(handled).toEqual([]);
    await joiner.handle(third);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({
      dedupeKey: first.dedupeKey,
      messageId: first.messageId,
      continuationKeys: [second.dedupeKey, third.dedupeKey],
    });
    expect(handled[0]!.text).toBe(`${first.text}\n${second.text}\nthe end`);
  });

  it('sends a long message alone once the wait passes without a next part', async () => {
    const { handled, joiner } = setup(1);
    const only = message(long('/codex '));
    await joiner.handle(only);
    await waitFor(() => handled.length === 1, { what: 'one message handled', intervalMs: 5 });
    expect(handled[0]).toBe(only);
  });

  it("releases a held paste before another sender's message or a command, keeping the order", async () => {
    const { handled, joiner } = setup(3_600_000);
    const paste = message(long('/codex '));
    await joiner.handle(paste);
    const other = message('/runs', '2');
    await joiner.handle(other);
    expect(handled.map((m) => m.dedupeKey)).toEqual([paste.dedupeKey, other.dedupeKey]);
    const again = message(long('/codex '));
    await joiner.handle(again);
    const stop = message('/stop', '2');
    await joiner.handle(stop);
    expect(handled.map((m) => m.dedupeKey).slice(2)).toEqual([again.dedupeKey, stop.dedupeKey]);
    expect(handled[2]!.continuationKeys).toBeUndefined();
  });

  it('joins a next part that starts with / (a path): the split is read before any command', async () => {
    const { handled, joiner } = setup(3_600_000);
    const first = message(long('/codex fix the resolver; look at '));
    const second = message('/etc/hosts and /etc/resolv.conf, then explain');
    await joiner.handle(first);
    await joiner.handle(second);
    expect(handled).toHaveLength(1);
    expect(handled[0]).toMatchObject({ dedupeKey: first.dedupeKey, continuationKeys: [second.dedupeKey] });
    expect(handled[0]!.text.endsWith('\n/etc/hosts and /etc/resolv.conf, then explain')).toBe(true);
  });

  it('does not join what follows a short message, nor after the wait, even from the same sender', async () => {
    const { handled, joiner } = setup(1);
    const first = message(long('/codex '));
    await joiner.handle(first);
    await waitFor(() => handled.length === 1, { what: 'one message handled', intervalMs: 5 });
    const late = message('/etc/hosts is wrong');
    await joiner.handle(late);
    expect(handled.map((m) => m.dedupeKey)).toEqual([first.dedupeKey, late.dedupeKey]);
    expect(handled[0]!.continuationKeys).toBeUndefined();
  });

  it('never holds short messages, other conversations, or anything when the wait is 0', async () => {
    const { handled, joiner } = setup(0);
    await joiner.handle(message(long('/codex ')));
    expect(handled).toHaveLength(1);
    const { handled: h2, joiner: j2 } = setup(3_600_000);
    await j2.handle(message('/codex short'));
    expect(h2).toHaveLength(1);
    await j2.handle(message(long('/codex '), '1', '42'));
    await j2.handle(message('/whoami', '1', '43'));
    expect(h2).toHaveLength(2); // chat 43 is not held up by chat 42's paste
  });
});
