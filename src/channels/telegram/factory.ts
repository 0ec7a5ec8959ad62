/** The Telegram channel factory: configured by `TELEGRAM_BOT_TOKEN` (and `TELEGRAM_API_ROOT`). */
import type { ChannelFactory } from '../start.js';
import { TelegramAdapter } from './adapter.js';

/** Creates the Telegram adapter when a bot token is set. */
export const telegramChannel: ChannelFactory = {
  platform: 'telegram',
  create: ({ env, clock, logger }) =>
    env.telegramBotToken
      ? new TelegramAdapter({ token: env.telegramBotToken, apiRoot: env.telegramApiRoot, clock, logger })
      : { skipped: 'TELEGRAM_BOT_TOKEN not set' },
};
