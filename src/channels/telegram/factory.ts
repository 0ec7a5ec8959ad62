/** The Telegram channel factory: configured by `TELEGRAM_BOT_TOKEN` (and `TELEGRAM_API_ROOT`). */
import { COMMAND_MENU } from '../../wording/command-menu.js';
import { telegramPollRefusedNotice } from '../../wording/channels.js';
import { adapterBase, lazyChannel } from '../factory.js';

/** Creates the Telegram adapter when a bot token is set. */
export const telegramChannel = lazyChannel({
  platform: 'telegram',
  token: (env) => env.telegramBotToken,
  tokenVariable: 'TELEGRAM_BOT_TOKEN',
  load: () => import('./adapter.js'),
  build: ({ TelegramAdapter }, token, deps) => {
    const { env, settings, conversations, lease, notifyOwner } = deps;
    return new TelegramAdapter({
      ...adapterBase(deps),
      token,
      apiRoot: env.telegramApiRoot,
      conversations,
      // An album is a message the client sent in parts, like a split paste: the same wait applies.
      ...(settings.pasteJoinMs > 0 ? { albumWaitMs: settings.pasteJoinMs } : {}),
      lease: lease?.('telegram', token),
      commands: COMMAND_MENU,
      onConflict: (reason) => notifyOwner?.('telegram', telegramPollRefusedNotice(reason)),
    });
  },
});
