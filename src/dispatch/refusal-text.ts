/** A refusal's text as the front end it goes to can act on it: how to restart, or no restart at all. */
import type { VendorName } from '../core/vendor-name.js';
import { VENDOR_FACTS } from '../harness/vendors/types.js';

/** A refusal's text without its ", then restart" step, for front ends that read the config per command. */
export function withoutRestart(text: string): string {
  return text
    .replace(/ when baton started\./g, '.')
    .replace(/ Install it \(([^)]*)\), then restart(?: baton| the service)?\./g, ' Install it: $1')
    .replace(/,? then restart(?: baton| the service)?\./g, '.');
}

/** The command that installs each vendor's CLI (see {@link VENDOR_FACTS}). */
export const VENDOR_INSTALL: Readonly<Record<VendorName, string>> = {
  codex: VENDOR_FACTS.codex.install,
  claude: VENDOR_FACTS.claude.install,
};

/** The refusal when `vendor`'s CLI was not on PATH at start, with how to install it. */
export function vendorMissingText(vendor: VendorName): string {
  return `The ${vendor} CLI was not found on PATH when baton started. Install it (${VENDOR_FACTS[vendor].install}), then restart baton.`;
}

/** A refusal's text with its ", then restart" step saying how (`how`: e.g. `systemctl --user restart baton`). */
export function withRestartHow(text: string, how: string): string {
  return text.replace(/,? then restart(?: baton| the service)?\./g, `, then restart baton (${how}).`);
}
