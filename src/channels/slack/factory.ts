/**
 * The Slack channel factory: `SLACK_BOT_TOKEN` plus either `SLACK_APP_TOKEN` (Socket Mode) or
 * `SLACK_SIGNING_SECRET` and `SLACK_PORT` (HTTP Events API); `SLACK_API_URL` for a proxy.
 */
import type { ChannelFactory } from '../start.js';

/** Creates the Slack adapter when a bot token and one way of receiving events are set. */
export const slackChannel: ChannelFactory = {
  platform: 'slack',
  preload: (env) => (env.slackBotToken ? import('./adapter.js') : undefined),
  create: async ({ env, clock, logger, inbox, presses, overtakes }) => {
    if (!env.slackBotToken) return { skipped: 'SLACK_BOT_TOKEN not set' };
    // Bolt is loaded only when Slack is configured (it costs ~300 ms and tens of MB).
    const { SlackAdapter } = await import('./adapter.js');
    const common = { token: env.slackBotToken, apiUrl: env.slackApiUrl, clock, logger, inbox, presses, overtakes };
    // Socket Mode wins when both are set: it needs no public URL.
    if (env.slackAppToken)
      return new SlackAdapter({ ...common, transport: { kind: 'socket', appToken: env.slackAppToken } });
    if (env.slackSigningSecret && env.slackPort !== undefined) {
      return new SlackAdapter({
        ...common,
        transport: { kind: 'http', signingSecret: env.slackSigningSecret, port: env.slackPort },
      });
    }
    return {
      skipped:
        'SLACK_BOT_TOKEN is set but no way to receive events: set SLACK_APP_TOKEN (Socket Mode), or SLACK_SIGNING_SECRET and SLACK_PORT (HTTP Events API)',
    };
  },
};
