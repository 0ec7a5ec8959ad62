/**
 * The terminal (`baton ask`) passes the channel contract. Its messages come from the person who
 * ran `baton ask` — the owner, the only one who can — as the service hands them over (one
 * conversation per ask), and what it sends is written to the asking terminal. It has no other
 * people, no redelivery, no platform that fails a send, no buttons, files or edits: each of those
 * cases asserts the terminal's fallback.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerminalAdapter } from '../../../src/channels/terminal/adapter.js';
import { localAttachment } from '../../../src/channels/terminal/local-file.js';
import type { InboundHandler } from '../../../src/channels/types.js';
import type { ChannelDriver, SentRecord } from './driver.js';
import { describeChannelContract } from './suite.js';

function terminalDriver(): ChannelDriver {
  const written: SentRecord[] = [];
  let handler: InboundHandler | undefined;
  let dir: string | undefined;

  return {
    platform: 'terminal',
    capabilities: {
      ownMessages: false,
      otherPeople: false,
      redelivery: false,
      sendFailures: false,
      buttons: false,
      documents: false,
      edits: false,
    },
    trust: undefined,
    startPlatform: async () => {
      dir = await mkdtemp(join(tmpdir(), 'baton-contract-terminal-'));
    },
    startAdapter: async (wiring) => {
      handler = wiring.handler;
      const adapter = new TerminalAdapter((text, chatId) => {
        // A terminal conversation is one ask: what is written to it answers that ask.
        written.push({ messageId: `terminal-${written.length + 1}`, text, replyTo: chatId, buttons: [] });
      });
      await adapter.start(wiring.handler);
      return adapter;
    },
    // Whoever the suite names, the terminal's sender is its owner (see the module comment).
    inject: async (_from, text, file) => {
      const chatId = `ask-${randomUUID()}`;
      let attachments: ReturnType<typeof localAttachment>[] | undefined;
      if (file) {
        const path = join(dir!, `${chatId}-${file.name}`);
        await writeFile(path, file.bytes);
        attachments = [{ ...localAttachment(path), name: file.name }];
      }
      await handler!({
        platform: 'terminal',
        dedupeKey: chatId,
        chatId,
        isDirect: true,
        messageId: chatId,
        senderId: 'owner',
        senderName: 'baton ask',
        senderIsBot: false,
        text,
        ...(attachments ? { attachments } : {}),
        receivedAt: new Date(),
      });
      return {
        messageId: chatId,
        redeliver: () => Promise.reject(new Error('the terminal never delivers an ask twice')),
      };
    },
    ownerTarget: () => ({ platform: 'terminal', chatId: 'ask-contract' }),
    sent: () => written,
    documents: () => [],
    edits: () => [],
    press: () => Promise.reject(new Error('the terminal shows no buttons')),
    pressAnswers: () => [],
    failNextSend: () => {
      throw new Error('the terminal has no platform to fail a send');
    },
    stop: async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

describeChannelContract(terminalDriver);
