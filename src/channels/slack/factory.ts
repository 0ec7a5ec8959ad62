/**
 * The Slack channel factory: `SLACK_BOT_TOKEN` plus either `SLACK_APP_TOKEN` (Socket Mode) or
 * `SLACK_SIGNING_SECRET` and `SLACK_PORT` (HTTP Events API); `SLACK_API_URL` for a proxy.
 */
import { slackNoReceiver } from '../../wording/channels.js';
import { adapterBase, lazyChannel } from '../factory.js';

/** Creates the Slack adapter when a bot token and one way of receiving events are set. */
export const slackChannel = lazyChannel({
  platform: 'slack',
  token: (env) => env.slackBotToken,
  tokenVariable: 'SLACK_BOT_TOKEN',
  // Bolt is loaded only when Slack is configured (it costs ~300 ms and tens of MB).
  load: () => import('./adapter.js'),
  build: ({ SlackAdapter }, token, deps) => {
    const { env } = deps;
    const common = { ...adapterBase(deps), token, apiUrl: env.slackApiUrl };
    // Socket Mode wins when both are set: it needs no public URL.
    if (env.slackAppToken)
      return new SlackAdapter({ ...common, transport: { kind: 'socket', appToken: env.slackAppToken } });
    if (env.slackSigningSecret && env.slackPort !== undefined) {
      return new SlackAdapter({
        ...common,
        transport: { kind: 'http', signingSecret: env.slackSigningSecret, port: env.slackPort },
      });
    }
    return { skipped: slackNoReceiver };
  },
});
