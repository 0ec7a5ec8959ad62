/** The Discord channel factory: configured by `DISCORD_BOT_TOKEN` (and `DISCORD_API_URL`). */
import type { ChannelFactory } from '../start.js';

/** Creates the Discord adapter when a bot token is set. */
export const discordChannel: ChannelFactory = {
  platform: 'discord',
  preload: (env) => (env.discordBotToken ? import('./adapter.js') : undefined),
  create: async ({ env, clock, logger, lease, inbox, presses, overtakes }) => {
    if (!env.discordBotToken) return { skipped: 'DISCORD_BOT_TOKEN not set' };
    // discord.js is loaded only when Discord is configured (it costs ~400 ms and tens of MB).
    const { DiscordAdapter } = await import('./adapter.js');
    return new DiscordAdapter({
      token: env.discordBotToken,
      apiUrl: env.discordApiUrl,
      clock,
      logger,
      inbox,
      presses,
      overtakes,
      lease: lease?.('discord', env.discordBotToken),
    });
  },
};
