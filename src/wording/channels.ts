/**
 * The texts the chat channels themselves show: answers to a button press, the reasons a file of
 * a message cannot be fetched, what a channel's state says, the start-up banner's hints, and what
 * the owner is told about a connection.
 */

/** The answer to a press of a button baton no longer acts on (or one baton did not make). */
export const staleButtonAnswer = 'This button no longer does anything.';

/** Why a file over the Bot API's download limit cannot be fetched, and what to do instead. */
export const telegramFileTooBig = {
  reason: 'Telegram lets bots download files of at most 20 MB',
  fix: 'Send a smaller file, or put it in the repository.',
} as const;

/** Why a file whose reference Telegram no longer honours cannot be fetched. */
export const telegramFileGone = 'Telegram no longer knows the file (its file reference expired)';

/** Why a file Telegram gave no path for cannot be fetched. */
export const telegramNoFilePath = 'Telegram gave no file path for it';

/** The state's reason while another poller answers 409 Conflict on the bot token. */
export const telegramPollConflict =
  '409 Conflict: another process is polling this bot token (only one may); stop it, then baton resumes polling';

/** What the owner is told once when Telegram refuses this fleet's polling (`reason`: why). */
export function telegramPollRefusedNotice(reason: string): string {
  return `baton could not poll Telegram: ${reason}. Another program uses this bot token outside the baton fleet; polling resumes by itself once it stops.`;
}

/**
 * A standby channel's reason: the node that holds the fleet's lease on the connection (`what` it
 * does with it, e.g. "polls this bot"), or why this node does not know yet.
 */
export function standbyReason(
  held: { state: 'standby'; holder: string } | { state: 'unknown'; reason: string },
  what: string,
): string {
  return held.state === 'standby'
    ? `node ${held.holder} ${what}; this node takes over if it stops`
    : `waiting for the fleet lease: ${held.reason}`;
}

/** Why a Slack file whose download URL is not on Slack's file host (`origin`) is not fetched. */
export function slackForeignDownloadUrl(origin: string): string {
  return `Slack gave it a download URL outside ${origin}; the bot token was not sent there`;
}

/** Why a Slack file answered with a redirect (HTTP `status`) is not fetched, and the fix. */
export function slackSignInRedirect(status: number): { reason: string; fix: string } {
  return {
    reason: `Slack answered with a redirect to its sign-in page (HTTP ${status}), not the file`,
    fix: 'Give the Slack app the files:read scope, reinstall it, then send the file again.',
  };
}

/** The reason of a channel that failed and tries again in `waitMs` (ms, shown in whole seconds). */
export function retryingReason(reason: string, waitMs: number): string {
  return `${reason} (retrying in ${Math.round(waitMs / 1000)}s)`;
}

/** The start-up banner's hint after a connected platform with no owner (`platform` as in `[channels.*]`). */
export function noOwnerHint(platform: string): string {
  return ` (no owner_user_id in [channels.${platform}]: nobody can launch runs; send /whoami to the bot to learn your id)`;
}

/** What a standby Discord node's holder does with the lease (the `what` of {@link standbyReason}). */
export const discordLeaseHolds = "holds this bot's gateway session";

/** The Discord state's reason while discord.js reconnects a lost gateway connection. */
export const discordReconnecting = 'gateway connection lost; reconnecting';

/** Why a Discord session ended when the gateway invalidated it. */
export const discordSessionInvalidated = 'gateway session invalidated';

/** Why a Discord login failed when READY did not come within `timeoutMs` (ms, shown in whole seconds). */
export function discordNotReady(timeoutMs: number): string {
  return `Discord gateway not ready within ${Math.round(timeoutMs / 1000)}s`;
}

/** Why a Discord login failed when the REST API answered 401 to the bot token, and the fix. */
export const discordTokenRefused = 'the REST API refused DISCORD_BOT_TOKEN (401); check the token';

/** A gateway close code as a reason that says the fix (Discord "Gateway Close Event Codes"). */
export function discordGatewayClosed(code: number): string {
  switch (code) {
    case 4004:
      return 'the gateway refused DISCORD_BOT_TOKEN (4004 Authentication failed); check the token';
    case 4014:
      return 'the gateway refused the intents (4014 Disallowed intents): enable "Message Content Intent" under Bot → Privileged Gateway Intents in the Discord Developer Portal';
    default:
      return `the gateway closed the connection (${code})`;
  }
}

/** Why a platform is not started: its token's environment `variable` is not set. */
export function notSetReason(variable: string): string {
  return `${variable} not set`;
}

/** Why Slack is not started although its bot token is set. */
export const slackNoReceiver =
  'SLACK_BOT_TOKEN is set but no way to receive events: set SLACK_APP_TOKEN (Socket Mode), or SLACK_SIGNING_SECRET and SLACK_PORT (HTTP Events API)';
