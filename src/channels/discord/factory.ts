/** The Discord channel factory: configured by `DISCORD_BOT_TOKEN` (and `DISCORD_API_URL`). */
import type { ChannelFactory } from '../start.js';
import { DiscordAdapter } from './adapter.js';

/** Creates the Discord adapter when a bot token is set. */
export const discordChannel: ChannelFactory = {
  platform: 'discord',
  create: ({ env, clock, logger }) =>
    env.discordBotToken
      ? new DiscordAdapter({ token: env.discordBotToken, apiUrl: env.discordApiUrl, clock, logger })
      : { skipped: 'DISCORD_BOT_TOKEN not set' },
};
