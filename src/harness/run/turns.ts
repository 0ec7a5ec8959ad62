/**
 * A run whose CLI takes more user messages on stdin ({@link StdinTurns}): its stdin stays open
 * after the task, a steer message is written as one more turn, and stdin is closed once a turn
 * ends with nothing written since that turn began (the CLI then exits as after a single task).
 */
import type { Writable } from 'node:stream';
import type { StdinTurns } from '../vendors/types.js';

/** What a steer message reached: the running turn, or a run whose input had already ended. */
export type SteerResult = 'added' | 'ended';

/** The open input of one run; see {@link followTurns}. */
export interface TurnInput {
  /** Writes `text` as one more user message, unless the input was closed. */
  steer(text: string): SteerResult;
  /** Reads one parsed vendor event for its turn boundaries. */
  onEvent(event: unknown): void;
  /** Whether stdin is still open for more messages. */
  open(): boolean;
  /** Asks the CLI to stop its turn and end; false when stdin was already closed. */
  interrupt(): boolean;
  /** Closes stdin without {@link followTurns}' `onClosed` (the run is being stopped). */
  close(): void;
}

/**
 * Follows the turns of a run on `stdin`, once its task was written there.
 *
 * A turn that ends with messages written since it began is followed by one more turn, which takes
 * them all (measured on claude 2.1.332, see claude.ts); a message written in the moment between a
 * turn's start and the CLI's read of its input may be taken into that turn instead, so stdin is
 * also closed when no next turn begins within `nextTurnWaitMs` of a turn's end.
 *
 * @param onClosed - called once, when stdin is closed.
 */
export function followTurns(
  stdin: Writable,
  turns: StdinTurns,
  nextTurnWaitMs: number,
  onClosed: () => void,
): TurnInput {
  let closed = false;
  let writtenInTurn = 0;
  let waiting: NodeJS.Timeout | undefined;
  const shut = (): boolean => {
    if (closed) return false;
    closed = true;
    if (waiting) clearTimeout(waiting);
    stdin.end();
    return true;
  };
  const close = (): void => {
    if (shut()) onClosed();
  };
  return {
    steer(text) {
      if (closed || !stdin.writable) return 'ended';
      writtenInTurn += 1;
      stdin.write(turns.message(text));
      return 'added';
    },
    onEvent(event) {
      if (closed) return;
      if (turns.turnStarted(event)) {
        writtenInTurn = 0;
        if (waiting) clearTimeout(waiting);
        waiting = undefined;
      } else if (turns.turnEnded(event)) {
        if (writtenInTurn === 0) return close();
        waiting = setTimeout(close, nextTurnWaitMs);
        waiting.unref();
      }
    },
    interrupt() {
      if (closed || !stdin.writable) return false;
      stdin.write(turns.interrupt('baton_stop'));
      return true;
    },
    open: () => !closed,
    close: () => void shut(),
  };
}
