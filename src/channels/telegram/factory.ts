/** The Telegram channel factory: configured by `TELEGRAM_BOT_TOKEN` (and `TELEGRAM_API_ROOT`). */
import { COMMAND_MENU } from '../../dispatch/command-menu.js';
import { telegramPollRefusedNotice } from '../../wording/channels.js';
import type { ChannelFactory } from '../start.js';

/** Creates the Telegram adapter when a bot token is set. */
export const telegramChannel: ChannelFactory = {
  platform: 'telegram',
  preload: (env) => (env.telegramBotToken ? import('./adapter.js') : undefined),
  create: async ({ env, config, clock, logger, inbox, conversations, lease, notifyOwner, presses, overtakes }) => {
    if (!env.telegramBotToken) return { skipped: 'TELEGRAM_BOT_TOKEN not set' };
    const { TelegramAdapter } = await import('./adapter.js');
    return new TelegramAdapter({
      token: env.telegramBotToken,
      apiRoot: env.telegramApiRoot,
      clock,
      logger,
      inbox,
      conversations,
      presses,
      overtakes,
      // An album is a message the client sent in parts, like a split paste: the same wait applies.
      ...(config.harness.pasteJoinMs > 0 ? { albumWaitMs: config.harness.pasteJoinMs } : {}),
      lease: lease?.('telegram', env.telegramBotToken),
      commands: COMMAND_MENU,
      onConflict: (reason) => notifyOwner?.('telegram', telegramPollRefusedNotice(reason)),
    });
  },
};
