/**
 * Releases, in reverse order, what a multi-step start opened before one of its steps failed.
 */
export class UndoStack {
  private readonly steps: { what: string; release: () => unknown }[] = [];
  /**
   * Told about a release that threw or rejected (the others still run). Until set, such errors
   * go to stderr: nothing is swallowed.
   */
  onError: (what: string, err: unknown) => void = (what, err) =>
    console.error(`baton: could not release the ${what}:`, err);

  /** Registers how to release `what` (a short noun for messages, e.g. `database`). */
  push(what: string, release: () => unknown): void {
    this.steps.push({ what, release });
  }

  /** Releases everything registered, last first, each awaited; never throws. Empties the stack. */
  async run(): Promise<void> {
    for (let step = this.steps.pop(); step !== undefined; step = this.steps.pop()) {
      try {
        await step.release();
      } catch (err) {
        this.onError(step.what, err);
      }
    }
  }
}
