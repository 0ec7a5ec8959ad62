/**
 * The postures a launch may ask for: what each vendor takes, and those no run ever gets (each
 * turns off the sandbox or every permission check, which no chat message may ask for). Shared by
 * the launch gates and their re-check at spawn.
 */
import { BatonError } from '../core/errors.js';
import type { VendorName } from '../core/vendor-name.js';

/** Postures no chat option may ask for: no sandbox at all, or no permission check at all. */
const REFUSED_POSTURES = new Set(['danger-full-access', 'bypassPermissions']);
/** Each vendor's postures baton passes on. */
export const POSTURES: Record<VendorName, readonly string[]> = {
  codex: ['read-only', 'workspace-write'],
  // claude 2.1.332 lists `manual` where 2.1.197 lists `default`; both are accepted (the vendor maps them).
  claude: ['default', 'manual', 'acceptEdits', 'auto', 'dontAsk', 'plan'],
};

/** @throws BatonError `posture_refused` for dangerous postures, `usage` for one the vendor does not take. */
export function assertPosture(vendor: VendorName, posture: string): void {
  if (REFUSED_POSTURES.has(posture)) {
    throw new BatonError(
      'posture_refused',
      `${posture} is refused: baton never runs an agent without its sandbox or permission checks. Use ${POSTURES[vendor].join(' or ')}, or leave it out to use your own CLI config.`,
    );
  }
  if (!POSTURES[vendor].includes(posture)) {
    throw new BatonError(
      'usage',
      `${posture} is not a ${vendor} ${vendor === 'codex' ? 'sandbox' : 'mode'}. Use one of: ${POSTURES[vendor].join(', ')}.`,
    );
  }
}
