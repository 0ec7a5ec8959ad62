/** The vendors this build drives, and the run timings every front end shares. */
import { claudeVendor } from '../harness/vendors/claude.js';
import { codexVendor } from '../harness/vendors/codex.js';
import { codexAppServerVendor } from '../harness/vendors/codex-app-server/vendor.js';
import type { Vendor } from '../harness/vendors/types.js';

/** Vendors this build can drive (codex as `codex exec`; see {@link vendorsFor}). */
export const VENDORS: readonly Vendor[] = [codexVendor, claudeVendor];

/** The vendors runs use, codex driven through `transport` (`[harness] codex_transport`). */
export function vendorsFor(transport: 'app-server' | 'exec'): readonly Vendor[] {
  return transport === 'exec' ? VENDORS : [codexAppServerVendor, claudeVendor];
}
/** SIGINT → SIGKILL grace when stopping a run, in ms. */
export const KILL_GRACE_MS = 3_000;
/**
 * How long output is still read after a CLI has exited, in ms: a descendant that inherited its
 * stdout can keep the pipe open for as long as it lives.
 */
export const EXIT_DRAIN_MS = 2_000;
