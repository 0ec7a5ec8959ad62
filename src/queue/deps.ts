/**
 * What the queue runner works with: the store, the outbox, the supervisor and this node, and the
 * launch gates it re-checks a row against, injected so that the queue never reaches into the
 * dispatcher.
 */
import type { BatonConfig } from '../config/index.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import type { VendorName } from '../core/vendor-name.js';
import type { Outbox } from '../delivery/outbox.js';
import type { NodeView } from '../fleet/nodes.js';
import type { InstalledVendor, RunSupervisor } from '../harness/supervisor.js';
import type { LaunchRequest } from '../harness/vendors/types.js';
import type { RunStore } from '../store/runs-repo.js';
import type { RunRow } from '../store/schema.js';

/** What a checked row spawns with. */
export interface SpawnRequest {
  request: LaunchRequest;
  /** The run's wall clock, in ms. */
  timeoutMs: number;
}

/** The launch gates once more against a run's row (see dispatch/spawn-gates.ts). */
export interface RowGates {
  /**
   * Every gate but the workspace one.
   *
   * @throws BatonError the gate's refusal.
   */
  assertRowOptions(run: RunRow): SpawnRequest;
  /**
   * Every gate, the workspace one on the run's directory included.
   *
   * @returns the request to spawn with, built from the checked fields only.
   * @throws BatonError the gate's refusal.
   */
  assertSpawnable(run: RunRow): Promise<SpawnRequest>;
}

/** Dependencies of the {@link QueueRunner}. */
export interface QueueDeps {
  store: RunStore;
  outbox: Outbox;
  supervisor: RunSupervisor;
  clock: Clock;
  logger: Logger;
  /** The config to act on now (the live one when the service refreshes it). */
  config(): BatonConfig;
  /** Re-reads config.toml; never rejects. @default none */
  refreshConfig?: (() => Promise<void>) | undefined;
  /** Vendor CLIs found on PATH at start. */
  vendors: ReadonlyMap<VendorName, InstalledVendor>;
  homeDir: string;
  protectedDirs?: readonly string[] | undefined;
  worktreesDir?: string | undefined;
  /** This node of the fleet (see DispatcherDeps.fleet). @default none: no routed runs */
  fleet?: { name: string; list(): Promise<NodeView[]>; readonly instance?: string | undefined } | undefined;
  /** Which queued runs this process may start (see DispatcherDeps.queueScope). @default 'all' */
  queueScope?: 'all' | 'own' | undefined;
  gates: RowGates;
}
