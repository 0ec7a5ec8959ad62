/**
 * The plan windows the CLIs reported, per node: written at each run's end, read by `/usage`,
 * and the once-per-period warning claimed in the same row, so two nodes never both warn.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { VendorName } from '../../core/vendor-name.js';
import type { Db } from '../database.js';
import { planWindows, type PlanWindowRow } from '../schema.js';

/** One window as a run's stream reported it. */
export interface ReportedWindow {
  window: string;
  usedPercent: number;
  resetsAt: Date | undefined;
}

/** The plan windows the CLIs reported. */
export class PlanWindowsRepo {
  constructor(private readonly db: Db) {}

  /**
   * Stores the windows a run of `vendor` on `node` reported at `reportedAt`, and claims the
   * warning of each one at or past `warnPercent` whose current period (its `resetsAt`) was not
   * warned for yet.
   *
   * @returns the windows to warn about now; each period of a window is returned once, across nodes.
   */
  async record(
    node: string,
    vendor: VendorName,
    windows: readonly ReportedWindow[],
    reportedAt: Date,
    warnPercent: number,
  ): Promise<ReportedWindow[]> {
    const warn: ReportedWindow[] = [];
    for (const w of windows) {
      const values = {
        node,
        vendor,
        window: w.window,
        usedPercent: w.usedPercent,
        resetsAt: w.resetsAt ?? null,
        reportedAt,
      };
      await this.db
        .insert(planWindows)
        .values(values)
        .onConflictDoUpdate({
          target: [planWindows.node, planWindows.vendor, planWindows.window],
          set: { usedPercent: values.usedPercent, resetsAt: values.resetsAt, reportedAt },
          // An older run's report never replaces a newer one.
          setWhere: sql`${planWindows.reportedAt} <= ${reportedAt.toISOString()}::timestamptz`,
        });
      if (w.usedPercent < warnPercent || !w.resetsAt) continue;
      const claimed = await this.db
        .update(planWindows)
        .set({ warnedResetAt: w.resetsAt })
        .where(
          and(
            eq(planWindows.node, node),
            eq(planWindows.vendor, vendor),
            eq(planWindows.window, w.window),
            sql`${planWindows.warnedResetAt} is distinct from ${w.resetsAt.toISOString()}::timestamptz`,
          ),
        )
        .returning({ window: planWindows.window });
      if (claimed.length > 0) warn.push(w);
    }
    return warn;
  }

  /** The windows reported on `node`, by vendor and window name. */
  async onNode(node: string): Promise<PlanWindowRow[]> {
    return this.db
      .select()
      .from(planWindows)
      .where(eq(planWindows.node, node))
      .orderBy(planWindows.vendor, planWindows.window);
  }
}
