/**
 * The inbox: raw inbound updates (`inbound_events`), claimed once before anything acts on them.
 */
import { and, eq, inArray, notInArray, sql } from 'drizzle-orm';
import type { Db } from '../database.js';
import { inboundEvents } from '../schema.js';
import type { InboxEntry } from './types.js';

/** The inbox: raw inbound updates (`inbound_events`), claimed once before anything acts on them. */
export class InboxRepo {
  constructor(private readonly db: Db) {}

  /**
   * Stores raw inbound updates in the inbox as `received`, before the platform is told they
   * arrived (Telegram: before the next `getUpdates` offset confirms them). Updates already known
   * are left as they are.
   */
  async recordInbox(platform: string, entries: readonly InboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db
      .insert(inboundEvents)
      .values(
        entries.map((e) => ({
          platform,
          dedupeKey: e.dedupeKey,
          receivedAt: e.receivedAt,
          state: 'received' as const,
          payload: e.payload,
        })),
      )
      .onConflictDoNothing();
  }

  /**
   * Claims an inbound event by its dedupe key before anything acts on it: a new event, or one the
   * inbox holds as `received`, becomes `claimed` by `claimant` (`host:pid`).
   *
   * @returns true when this caller may act on the event; false when it was claimed or handled
   *   before (do nothing).
   */
  async recordInbound(platform: string, dedupeKey: string, receivedAt: Date, claimant = ''): Promise<boolean> {
    const claimed = await this.db
      .insert(inboundEvents)
      .values({ platform, dedupeKey, receivedAt, state: 'claimed', claimedBy: claimant })
      .onConflictDoUpdate({
        target: [inboundEvents.platform, inboundEvents.dedupeKey],
        set: { state: 'claimed', claimedBy: claimant },
        setWhere: sql`${inboundEvents.state} = 'received'`,
      })
      .returning({ key: inboundEvents.dedupeKey });
    return claimed.length === 1;
  }

  /** Marks a claimed inbound event handled (never acted on again) and drops its raw payload. */
  async markInboundHandled(platform: string, dedupeKey: string): Promise<void> {
    await this.db
      .update(inboundEvents)
      .set({ state: 'handled', payload: null })
      .where(and(eq(inboundEvents.platform, platform), eq(inboundEvents.dedupeKey, dedupeKey)));
  }

  /** Deletes an inbox row nobody will act on (a stranger's message, an update baton ignores). */
  async forgetInbound(platform: string, dedupeKey: string): Promise<void> {
    await this.db
      .delete(inboundEvents)
      .where(
        and(
          eq(inboundEvents.platform, platform),
          eq(inboundEvents.dedupeKey, dedupeKey),
          sql`${inboundEvents.state} <> 'handled'`,
        ),
      );
  }

  /**
   * Returns `claimant`'s claims on stored updates of `platform` (raw payload kept) to
   * `received`, except the dedupe keys in `inFlight`.
   *
   * @returns how many were released.
   */
  async releaseClaimsOf(platform: string, claimant: string, inFlight: readonly string[]): Promise<number> {
    const released = await this.db
      .update(inboundEvents)
      .set({ state: 'received', claimedBy: null })
      .where(
        and(
          eq(inboundEvents.platform, platform),
          eq(inboundEvents.claimedBy, claimant),
          sql`${inboundEvents.state} = 'claimed'`,
          sql`${inboundEvents.payload} is not null`,
          inFlight.length > 0 ? notInArray(inboundEvents.dedupeKey, [...inFlight]) : undefined,
        ),
      )
      .returning({ key: inboundEvents.dedupeKey });
    return released.length;
  }

  /** Raw updates of `platform` stored but not yet claimed, oldest first (replayed at start). */
  async receivedInbound(platform: string): Promise<InboxEntry[]> {
    const rows = await this.db
      .select({
        dedupeKey: inboundEvents.dedupeKey,
        receivedAt: inboundEvents.receivedAt,
        payload: inboundEvents.payload,
      })
      .from(inboundEvents)
      .where(
        and(
          eq(inboundEvents.platform, platform),
          sql`${inboundEvents.state} = 'received'`,
          sql`${inboundEvents.payload} is not null`,
        ),
      )
      .orderBy(inboundEvents.receivedAt);
    return rows;
  }

  /**
   * Returns the claims of service processes that died (`isDead(claimant)`) to `received`, so the
   * inbox hands those events out again. Only claimants whose id starts with `claimantPrefix`
   * (this host) are considered.
   *
   * @returns how many events were released.
   */
  async releaseInboundClaims(claimantPrefix: string, isDead: (claimant: string) => boolean): Promise<number> {
    const claimants = await this.db
      .selectDistinct({ claimedBy: inboundEvents.claimedBy })
      .from(inboundEvents)
      .where(
        and(sql`${inboundEvents.state} = 'claimed'`, sql`starts_with(${inboundEvents.claimedBy}, ${claimantPrefix})`),
      );
    const dead = claimants.map((c) => c.claimedBy ?? '').filter((c) => c !== '' && isDead(c));
    if (dead.length === 0) return 0;
    const released = await this.db
      .update(inboundEvents)
      .set({ state: 'received', claimedBy: null })
      .where(and(sql`${inboundEvents.state} = 'claimed'`, inArray(inboundEvents.claimedBy, dead)))
      .returning({ key: inboundEvents.dedupeKey });
    return released.length;
  }
}
