/**
 * `baton ask` carried out by the service (embedded PGlite keeps the database to it): the run is
 * this process's, and its messages stream back to the asking terminal as they are sent.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { localAttachment } from '../channels/terminal/local-file.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { AdminAsk } from '../service/control-api/admin.js';
import type { RunStore } from '../store/runs-repo.js';
import { followText } from '../wording/ask.js';
import { askReport } from './ask-report.js';
import { terminalMessage, type TerminalConversations } from './conversations.js';

/** How often a `baton ask` served here checks whether its run has ended, in ms. */
const ASK_POLL_MS = 200;

/** What {@link serveAsk} needs of the service. */
export interface ServiceAskDeps {
  conversations: TerminalConversations;
  dispatcher: Pick<Dispatcher, 'handle' | 'cancelOwn'>;
  store: { runs: Pick<RunStore['runs'], 'getRun'>; outbox: Pick<RunStore['outbox'], 'deliveriesOfRun'> };
  clock: Clock;
  logger: Logger;
}

/** The control API's `baton ask` handler: launches the run and waits for it to end. */
export function serveAsk(deps: ServiceAskDeps): AdminAsk {
  const { conversations, dispatcher, store, clock, logger } = deps;
  return async (text, files, onMessage, gone, options) => {
    const chatId = `ask-${randomUUID()}`;
    const messages: string[] = [];
    const stopListening = conversations.listen(chatId, (message) => {
      messages.push(message);
      onMessage(message);
    });
    try {
      const result = await dispatcher.handle(
        terminalMessage({
          dedupeKey: chatId,
          chatId,
          messageId: 'ask',
          senderName: 'baton ask',
          text,
          // The owner's own files, named with `baton ask --file` (the admin token proves the owner).
          ...(files.length > 0 ? { attachments: files.map(localAttachment) } : {}),
          receivedAt: clock.now(),
        }),
      );
      if (result.kind !== 'launched')
        return { status: 'refused', code: result.kind === 'refused' ? result.code : result.kind, messages };
      const runId = result.runId;
      if (options?.noWait && (await store.runs.getRun(runId))?.status === 'queued') {
        return { runId, status: 'queued', follow: followText(runId, true), messages };
      }
      // Queued or active: a client gone before the run ended drops it, as /cancel would.
      const cancel = (): void =>
        void dispatcher
          .cancelOwn(runId)
          .catch((err: unknown) => logger.warn({ err, runId }, 'could not cancel the run of an ask that went away'));
      if (gone.aborted) cancel();
      else gone.addEventListener('abort', cancel, { once: true });
      // Wait for the run to end and its messages to go out (a condition, polled; no deadline).
      for (;;) {
        const run = await store.runs.getRun(runId);
        // A queued run waits for its turn, which this service gives it (its queue runner).
        const ended =
          run !== undefined && run.status !== 'queued' && run.status !== 'starting' && run.status !== 'running';
        if (ended && (await store.outbox.deliveriesOfRun(runId)).every((d) => d.status !== 'pending')) {
          gone.removeEventListener('abort', cancel);
          return askReport(runId, run, messages) as unknown as Record<string, unknown>;
        }
        await sleep(ASK_POLL_MS);
      }
    } finally {
      stopListening();
    }
  };
}
