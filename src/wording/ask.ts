/** Sentences of `baton ask` about its run's place in the queue. */

/**
 * What `baton ask --no-wait` says of a queued run: how to follow it and drop it, and who starts
 * it (the service; without one running, nothing until it is started).
 */
export function followText(runId: string, serviceRuns: boolean): string {
  const starter = serviceRuns
    ? 'The running baton service starts it when its turn comes.'
    : 'No baton service is running: start one (baton start) and it starts the run when its turn comes.';
  return `Not waiting (--no-wait). ${starter} Follow it with baton runs ${runId}; drop it with baton cancel ${runId}.`;
}

/** What `baton ask` prints while its run waits behind another run of the same checkout. */
export const WAITING_FOR_TURN_TEXT = 'Waiting for its turn; Ctrl-C drops it.';
