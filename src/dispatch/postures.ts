/**
 * The postures a launch may ask for: what each vendor takes, and those no run ever gets (each
 * turns off the sandbox or every permission check, which no chat message may ask for). Shared by
 * the launch gates and their re-check at spawn.
 */
import { BatonError } from '../core/errors.js';
import type { VendorName } from '../core/vendor-name.js';
import { VENDOR_FACTS } from '../harness/vendors/types.js';

/** Postures no chat option may ask for: no sandbox at all, or no permission check at all. */
const REFUSED_POSTURES = new Set(['danger-full-access', 'bypassPermissions']);

/** @throws BatonError `posture_refused` for dangerous postures, `usage` for one the vendor does not take. */
export function assertPosture(vendor: VendorName, posture: string): void {
  const { postures, postureWord } = VENDOR_FACTS[vendor];
  if (REFUSED_POSTURES.has(posture)) {
    throw new BatonError(
      'posture_refused',
      `${posture} is refused: baton never runs an agent without its sandbox or permission checks. Use ${postures.join(' or ')}, or leave it out to use your own CLI config.`,
    );
  }
  if (!postures.includes(posture)) {
    throw new BatonError('usage', `${posture} is not a ${vendor} ${postureWord}. Use one of: ${postures.join(', ')}.`);
  }
}
