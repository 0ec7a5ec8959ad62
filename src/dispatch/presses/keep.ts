/** Keep waiting, under the watchdog's advisory. */
import type { PressAnswer } from './outcome.js';

/** The run goes on; the advisory's buttons give way. */
export function pressKeep(): PressAnswer {
  return { text: 'The run continues.', done: true };
}
