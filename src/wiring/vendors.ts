/** The vendors this build drives, and the run timings every front end shares. */
import { claudeVendor } from '../harness/vendors/claude.js';
import { codexVendor } from '../harness/vendors/codex.js';
import type { Vendor } from '../harness/vendors/types.js';

/** Vendors this build can drive. */
export const VENDORS: readonly Vendor[] = [codexVendor, claudeVendor];
/** SIGINT → SIGKILL grace when stopping a run, in ms. */
export const KILL_GRACE_MS = 3_000;
/**
 * How long output is still read after a CLI has exited, in ms: a descendant that inherited its
 * stdout can keep the pipe open for as long as it lives.
 */
export const EXIT_DRAIN_MS = 2_000;
