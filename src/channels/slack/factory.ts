/**
 * The Slack channel factory: `SLACK_BOT_TOKEN` plus either `SLACK_APP_TOKEN` (Socket Mode) or
 * `SLACK_SIGNING_SECRET` and `SLACK_PORT` (HTTP Events API); `SLACK_API_URL` for a proxy.
 */
import { slackNoReceiver } from '../../wording/channels.js';
import { lazyChannel } from '../factory.js';

/** Creates the Slack adapter when a bot token and one way of receiving events are set. */
export const slackChannel = lazyChannel(
  'slack',
  // Bolt is loaded only when Slack is configured (it costs ~300 ms and tens of MB).
  () => import('./adapter.js'),
  ({ SlackAdapter }, base, deps) => {
    const { appToken, signingSecret, port, apiUrl } = deps.env.slack;
    const common = { ...base, apiUrl };
    // Socket Mode wins when both are set: it needs no public URL.
    if (appToken) return new SlackAdapter({ ...common, transport: { kind: 'socket', appToken } });
    if (signingSecret && port !== undefined)
      return new SlackAdapter({ ...common, transport: { kind: 'http', signingSecret, port } });
    return { skipped: slackNoReceiver };
  },
);
