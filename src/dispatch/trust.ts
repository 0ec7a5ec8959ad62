/** Who a sender is on a platform. */
import type { ChannelTrust } from '../config/index.js';

/** The caller's role: the owner launches and stops; a guest reads; a stranger is ignored. */
export type Role = 'owner' | 'guest' | 'stranger';

/** The role of `senderId` under a platform's trust settings. */
export function roleOf(trust: ChannelTrust, senderId: string): Role {
  if (trust.owner !== undefined && senderId === trust.owner) return 'owner';
  if (trust.guests.includes(senderId)) return 'guest';
  return 'stranger';
}

/** What a caller may do. */
export type Action = 'launch' | 'read' | 'whoami';

/**
 * Whether `role` may perform `action`; `/whoami` from a stranger is allowed only in a direct message.
 */
export function mayPerform(role: Role, action: Action, isDirect: boolean): boolean {
  switch (role) {
    case 'owner':
      return true;
    case 'guest':
      return action !== 'launch';
    case 'stranger':
      return action === 'whoami' && isDirect;
  }
}

/** The refusal a guest gets for a launch, cancel or stop (exact text). */
export const GUEST_REFUSAL = 'Coding runs are available to the owner only.';
