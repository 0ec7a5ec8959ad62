import { describe, expect, it } from 'vitest';
import { ConversationQueue } from '../../src/channels/conversation-queue.js';

/** A task that finishes only when the test releases it, recording when it started. */
function gate(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    task: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
      return name;
    },
    release: () => release(),
  };
}

describe('ConversationQueue', () => {
  it('runs the tasks of one conversation one after another, in the order queued', async () => {
    const queue = new ConversationQueue();
    const log: string[] = [];
    const first = gate(log, 'a1');
    const second = gate(log, 'a2');
    const p1 = queue.run('chat-a', first.task);
    const p2 = queue.run('chat-a', second.task);
    await Promise.resolve();
    await Promise.resolve();
    expect(log).toEqual(['start a1']);
    // Releasing the second first changes nothing: it has not started.
    second.release();
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start a1']);
    first.release();
    expect(await Promise.all([p1, p2])).toEqual(['a1', 'a2']);
    expect(log).toEqual(['start a1', 'end a1', 'start a2', 'end a2']);
    expect(queue.busyConversations).toBe(0);
  });

  it('keeps different conversations concurrent', async () => {
    const queue = new ConversationQueue();
    const log: string[] = [];
    const a = gate(log, 'a');
    const b = gate(log, 'b');
    const pa = queue.run('chat-a', a.task);
    const pb = queue.run('chat-b', b.task);
    await new Promise((r) => setImmediate(r));
    expect(log).toEqual(['start a', 'start b']);
    b.release();
    expect(await pb).toBe('b');
    expect(log).toContain('end b');
    expect(log).not.toContain('end a');
    a.release();
    await pa;
  });

  it('passes a failure to its caller and still runs the next task of the conversation', async () => {
    const queue = new ConversationQueue();
    const failed = queue.run('chat-a', async () => {
      throw new Error('handler failed');
    });
    const next = queue.run('chat-a', async () => 'after');
    await expect(failed).rejects.toThrow('handler failed');
    expect(await next).toBe('after');
  });
});
