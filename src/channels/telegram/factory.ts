/** The Telegram channel factory: configured by `TELEGRAM_BOT_TOKEN` (and `TELEGRAM_API_ROOT`). */
import { COMMAND_MENU } from '../../wording/command-menu.js';
import { telegramPollRefusedNotice } from '../../wording/channels.js';
import { lazyChannel } from '../factory.js';

/** Creates the Telegram adapter when a bot token is set. */
export const telegramChannel = lazyChannel(
  'telegram',
  () => import('./adapter.js'),
  ({ TelegramAdapter }, base, deps) =>
    new TelegramAdapter({
      ...base,
      apiRoot: deps.env.telegram.apiRoot,
      conversations: deps.conversations,
      // An album is a message the client sent in parts, like a split paste: the same wait applies.
      ...(deps.settings.pasteJoinMs > 0 ? { albumWaitMs: deps.settings.pasteJoinMs } : {}),
      lease: deps.lease?.('telegram', base.token),
      commands: COMMAND_MENU,
      onConflict: (reason) => deps.notifyOwner?.('telegram', telegramPollRefusedNotice(reason)),
    }),
);
