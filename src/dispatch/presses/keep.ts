/** Keep waiting, under the watchdog's advisory. */
import { RUN_CONTINUES } from '../../wording/presses.js';
import type { PressAnswer } from './outcome.js';

/** The run goes on; the advisory's buttons give way. */
export function pressKeep(): PressAnswer {
  return { text: RUN_CONTINUES, done: true };
}
