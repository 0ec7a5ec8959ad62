/** The Telegram channel factory: configured by `TELEGRAM_BOT_TOKEN` (and `TELEGRAM_API_ROOT`). */
import type { ChannelFactory } from '../start.js';

/** Creates the Telegram adapter when a bot token is set. */
export const telegramChannel: ChannelFactory = {
  platform: 'telegram',
  create: async ({ env, clock, logger, inbox, conversations, presses }) => {
    if (!env.telegramBotToken) return { skipped: 'TELEGRAM_BOT_TOKEN not set' };
    const { TelegramAdapter } = await import('./adapter.js');
    return new TelegramAdapter({ token: env.telegramBotToken, apiRoot: env.telegramApiRoot, clock, logger, inbox, conversations, presses });
  },
};
