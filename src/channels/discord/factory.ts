/** The Discord channel factory: configured by `DISCORD_BOT_TOKEN` (and `DISCORD_API_URL`). */
import { adapterBase, lazyChannel } from '../factory.js';

/** Creates the Discord adapter when a bot token is set. */
export const discordChannel = lazyChannel({
  platform: 'discord',
  token: (env) => env.discordBotToken,
  tokenVariable: 'DISCORD_BOT_TOKEN',
  // discord.js is loaded only when Discord is configured (it costs ~400 ms and tens of MB).
  load: () => import('./adapter.js'),
  build: ({ DiscordAdapter }, token, deps) =>
    new DiscordAdapter({
      ...adapterBase(deps),
      token,
      apiUrl: deps.env.discordApiUrl,
      lease: deps.lease?.('discord', token),
    }),
});
