/** The state a channel behind a fleet lease shows when its first try did not take the lease. */
import { standbyReason } from '../wording/channels.js';
import type { ChannelState, ConnectionLease } from './types.js';

/**
 * `standby` with who holds the lease (`what` that node does with it, e.g. "polls this bot"), or
 * undefined when this node holds it and the connection's own state applies.
 */
export function leaseStandbyState(lease: ConnectionLease, what: string): ChannelState | undefined {
  const held = lease.state();
  if (held.state === 'holding') return undefined;
  return { state: 'standby', reason: standbyReason(held, what) };
}
