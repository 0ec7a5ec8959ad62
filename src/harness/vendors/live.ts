/**
 * What a run is doing right now, for its live status message: the step the
 * agent last started, the files it changed through its edit tools, and the tokens reported so
 * far. Each vendor's reducer feeds one {@link LiveTracker} from its events.
 */

/** Steps kept for `progress` runs. */
export const RECENT_STEPS = 5;
import type { LiveFacts } from '../../types/run-facts.js';

export type { LiveFacts } from '../../types/run-facts.js';
/** Most changed paths remembered per run. */
export const MAX_TRACKED_FILES = 1000;
/** Longest step text, in characters. */
const MAX_STEP_CHARS = 120;

/** Folds steps, changed files and token counts into {@link LiveFacts}. */
export class LiveTracker {
  private step: string | undefined;
  private readonly recent: string[] = [];
  private readonly files = new Set<string>();
  private tokens = 0;

  /** The agent started `step` (one line; cut to 120 characters). */
  stepStarted(step: string): void {
    const line = step.replace(/\s+/g, ' ').trim();
    if (line === '') return;
    this.step = line.length <= MAX_STEP_CHARS ? line : `${line.slice(0, MAX_STEP_CHARS - 1)}…`;
    this.recent.push(this.step);
    if (this.recent.length > RECENT_STEPS) this.recent.shift();
  }

  /** The agent changed `path` through an edit tool. */
  fileChanged(path: string): void {
    if (path !== '' && this.files.size < MAX_TRACKED_FILES) this.files.add(path);
  }

  /** The tokens reported so far (the largest count seen: counts only grow). */
  tokensSoFar(tokens: number): void {
    if (Number.isFinite(tokens) && tokens > this.tokens) this.tokens = tokens;
  }

  facts(): LiveFacts {
    return {
      ...(this.step ? { step: this.step } : {}),
      recentSteps: [...this.recent],
      filesChanged: [...this.files],
      tokens: this.tokens,
    };
  }
}
