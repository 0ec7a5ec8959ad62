/**
 * Where a launch spends its time before the run row is committed: the 'run launched'
 * log line carries these, so the dispatch-overhead bench and a reader of the log can tell the
 * inbound claim from the lookups and the run transaction without a profiler.
 */

/** Milliseconds since the dispatcher took an inbound event, at each named step, in order. */
export class LaunchSpans {
  private readonly startMs = performance.now();
  private readonly marks: [string, number][] = [];

  /**
   * @param receivedAt when the channel received the event (its clock, ms resolution); kept as
   *   `receivedToHandleMs`, the wait before the dispatcher took it.
   */
  constructor(private readonly receivedAt?: Date) {
    this.receivedToHandleMs = receivedAt ? Math.max(0, Date.now() - receivedAt.getTime()) : undefined;
  }

  private readonly receivedToHandleMs: number | undefined;

  /** Notes that step `name` is done now. */
  mark(name: string): void {
    this.marks.push([name, performance.now() - this.startMs]);
  }

  /** `{ received_to_handle?, <step>: ms since the dispatcher took the event, … }`, rounded to 0.1 ms. */
  toJSON(): Record<string, number> {
    const out: Record<string, number> = {};
    if (this.receivedToHandleMs !== undefined) out.received_to_handle = this.receivedToHandleMs;
    for (const [name, ms] of this.marks) out[name] = Math.round(ms * 10) / 10;
    return out;
  }
}
