/**
 * A lease in PostgreSQL on a connection only one process of a fleet may hold:
 * Telegram answers a second `getUpdates` on one bot token with 409 Conflict, so exactly one node
 * polls and the others stand by.
 *
 * The lease is a row in `leases` keyed by the platform and a SHA-256 prefix of the token (the
 * token is never stored). One statement takes or renews it, judged by database time, so the
 * nodes' clocks do not matter: the holder renews every {@link LEASE_RENEW_MS}; a standby tries
 * as often and takes it once `expires_at` has passed. A holder that cannot renew (the database is
 * away) gives the connection up before its lease can have expired, so two pollers never overlap
 * by our fault. Worst-case takeover after a holder dies: {@link LEASE_TTL_MS} + {@link LEASE_RENEW_MS}.
 */
import { createHash } from 'node:crypto';
import { eq, sql } from 'drizzle-orm';
import type { Logger } from '../core/logger.js';
import type { Db } from '../store/database.js';
import { leases } from '../store/schema.js';

/** How long a lease lasts without renewal, in ms (database time). */
export const LEASE_TTL_MS = 10_000;
/** How often the holder renews and a standby tries, in ms. */
export const LEASE_RENEW_MS = 2_500;

/** The lease key of a platform connection: `platform:` + the first 16 hex of SHA-256(token). */
export function leaseKey(platform: string, token: string): string {
  return `${platform}:${createHash('sha256').update(token).digest('hex').slice(0, 16)}`;
}

/** What a lease-held connection is told. */
export interface LeaseCallbacks {
  /** This process now holds the lease: connect. May be called again after {@link onLost}. */
  onAcquired(): void | Promise<void>;
  /** The lease is gone (taken over, or not renewable in time): disconnect now. */
  onLost(reason: string): void | Promise<void>;
}

/** The state of a lease as this process sees it, for doctor and the banner. */
export type LeaseState =
  | { state: 'holding' }
  | { state: 'standby'; holder: string }
  | { state: 'unknown'; reason: string };

/** Options of {@link DatabaseLease}. */
export interface DatabaseLeaseOptions {
  db: Db;
  key: string;
  /** This process's node instance (`nodes.instance`). */
  holder: string;
  nodeName: string;
  logger: Logger;
  /** @default {@link LEASE_TTL_MS} */
  ttlMs?: number;
  /** @default {@link LEASE_RENEW_MS} */
  renewMs?: number;
  /** Monotonic ms clock. @default performance.now */
  nowMs?: () => number;
}

/** One lease, taken and renewed in the background while started. */
export class DatabaseLease {
  private timer: NodeJS.Timeout | undefined;
  private holding = false;
  /** Monotonic time of the last successful take or renewal. */
  private renewedAt = 0;
  private current: LeaseState = { state: 'unknown', reason: 'not tried yet' };
  private callbacks: LeaseCallbacks | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private inFlight = false;
  private readonly ttlMs: number;
  private readonly renewMs: number;
  private readonly nowMs: () => number;

  constructor(private readonly options: DatabaseLeaseOptions) {
    this.ttlMs = options.ttlMs ?? LEASE_TTL_MS;
    this.renewMs = options.renewMs ?? LEASE_RENEW_MS;
    this.nowMs = options.nowMs ?? (() => performance.now());
  }

  /** Starts trying; resolves after the first try (so a lone node connects before its banner). */
  async start(callbacks: LeaseCallbacks): Promise<void> {
    this.callbacks = callbacks;
    await this.tick();
    this.timer = setInterval(() => {
      // Checked on the clock, not after a query: a renewal that hangs (a database that went
      // silent) must not keep this node polling past its lease.
      if (this.holding && this.nowMs() - this.renewedAt >= this.ttlMs - this.renewMs) {
        void this.lose('the lease could not be renewed in time (database unreachable or too slow)');
      }
      if (this.inFlight) return;
      this.inFlight = true;
      this.ticking = this.tick().finally(() => {
        this.inFlight = false;
      });
    }, this.renewMs);
    this.timer.unref();
  }

  state(): LeaseState {
    return this.current;
  }

  private async tick(): Promise<void> {
    const { db, key, holder, nodeName, logger } = this.options;
    try {
      const rows = await db
        .insert(leases)
        .values({
          key,
          holder,
          nodeName,
          acquiredAt: sql`now()` as unknown as Date,
          expiresAt: sql`now() + ${this.ttlMs}::double precision * interval '1 millisecond'` as unknown as Date,
        })
        .onConflictDoUpdate({
          target: leases.key,
          set: {
            holder,
            nodeName,
            acquiredAt:
              sql`case when ${leases.holder} = excluded.holder then ${leases.acquiredAt} else now() end` as unknown as Date,
            expiresAt: sql`excluded.expires_at` as unknown as Date,
          },
          setWhere: sql`${leases.holder} = excluded.holder or ${leases.expiresAt} < now()`,
        })
        .returning({ holder: leases.holder });
      if (rows.length > 0) {
        this.renewedAt = this.nowMs();
        this.current = { state: 'holding' };
        if (!this.holding) {
          this.holding = true;
          logger.info({ lease: key, node: nodeName }, 'took the lease: this node connects');
          await this.callbacks?.onAcquired();
        }
        return;
      }
      const [row] = await db.select({ nodeName: leases.nodeName }).from(leases).where(eq(leases.key, key));
      this.current = { state: 'standby', holder: row?.nodeName ?? 'another node' };
      if (this.holding) await this.lose(`node ${row?.nodeName ?? '?'} took the lease`);
    } catch (err) {
      this.current = { state: 'unknown', reason: err instanceof Error ? err.message : String(err) };
      // A holder lets go on the clock (see start); a standby just tries again.
      if (!this.holding) logger.warn({ err, lease: key }, 'could not try the lease; trying again');
    }
  }

  private async lose(reason: string): Promise<void> {
    this.holding = false;
    this.options.logger.warn({ lease: this.options.key, reason }, 'lost the lease: this node disconnects');
    await this.callbacks?.onLost(reason);
  }

  /** Stops trying and, when held, gives the lease back so a standby takes it at its next try. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    // A renewal hanging on an unreachable database must not hold up the service's stop.
    await Promise.race([this.ticking, new Promise((resolve) => setTimeout(resolve, 1_000).unref())]);
    if (!this.holding) return;
    this.holding = false;
    const { db, key, holder } = this.options;
    await db
      .delete(leases)
      .where(sql`${leases.key} = ${key} and ${leases.holder} = ${holder}`)
      .catch((err: unknown) =>
        this.options.logger.warn({ err, lease: key }, 'could not give the lease back; it expires by itself'),
      );
  }
}
