/** The Discord channel factory: configured by `DISCORD_BOT_TOKEN` (and `DISCORD_API_URL`). */
import { lazyChannel } from '../factory.js';

/** Creates the Discord adapter when a bot token is set. */
export const discordChannel = lazyChannel(
  'discord',
  // discord.js is loaded only when Discord is configured (it costs ~400 ms and tens of MB).
  () => import('./adapter.js'),
  ({ DiscordAdapter }, base, deps) =>
    new DiscordAdapter({ ...base, apiUrl: deps.env.discord.apiUrl, lease: deps.lease?.('discord', base.token) }),
);
