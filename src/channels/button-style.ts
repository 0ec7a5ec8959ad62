/** How baton's buttons look on the platforms that colour them. */

/** Buttons shown red on Slack and Discord: the ones that stop or refuse. */
export function isDanger(action: string): boolean {
  return action === 'stop' || action === 'deny';
}
