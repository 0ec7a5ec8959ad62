/**
 * A vendor's plan limit as the runs recorded it: the latest run that ended `quota_exhausted` with
 * a reset time still ahead, unless a later run of the same vendor on the same node completed.
 */
import { and, desc, eq, gt, sql } from 'drizzle-orm';
import type { VendorName } from '../../core/vendor-name.js';
import type { Db } from '../database.js';
import { runs } from '../schema.js';

/** A vendor known to be at its plan's limit. */
export interface ExhaustedVendor {
  /** When the plan's limit resets. */
  resetsAt: Date;
  /** The run whose end said so. */
  runId: string;
}

/** The plan limits the runs recorded. */
export class QuotaRepo {
  constructor(private readonly db: Db) {}

  /**
   * Whether `vendor` is at its plan's limit on `node` at `now`: a run of it there ended
   * `quota_exhausted` with a reset after `now`, and no run of it there completed after that one.
   * Runs without a node (from before routing) count for a call without one.
   *
   * @returns the limit, or undefined when none is known.
   */
  async exhaustedUntil(vendor: VendorName, node: string | undefined, now: Date): Promise<ExhaustedVendor | undefined> {
    const sameNode = node === undefined ? sql`${runs.node} is null` : eq(runs.node, node);
    const [row] = await this.db
      .select({ id: runs.id, resetsAt: runs.quotaResetsAt })
      .from(runs)
      .where(
        and(
          eq(runs.vendor, vendor),
          eq(runs.reason, 'quota_exhausted'),
          gt(runs.quotaResetsAt, now),
          sameNode,
          sql`not exists (select 1 from runs later where later.vendor = ${runs.vendor}
                and later.status = 'completed' and later.ended_at > ${runs.endedAt}
                and later.node is not distinct from ${runs.node})`,
        ),
      )
      .orderBy(desc(runs.endedAt))
      .limit(1);
    return row?.resetsAt ? { resetsAt: row.resetsAt, runId: row.id } : undefined;
  }
}
